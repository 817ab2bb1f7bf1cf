import { describe, expect, it } from 'vitest';
import { ConfigEnv, ConfigurationError, configToEnv, loadConfig } from '../../shared/config.ts';
import { AggregateStatus } from '../../shared/engine/constants.ts';
import { WireAttribute } from '../../shared/engine/correlation.ts';
import { completionStageOf } from '../../shared/engine/lifecycle.ts';
import type { AggregateHeader, RawMessage } from '../../shared/ports.ts';
import { QueueRole } from '../../shared/topology/topology.ts';
import { handleReplies } from '../../shared/use-cases/replies.ts';
import { handleTimer } from '../../shared/use-cases/timers.ts';
import { memoryContext } from '../support/memory-store.ts';
import { aDefinition } from './shared/engine/factories.ts';

/**
 * Fast use-case tests over in-memory ports (test/support/memory-store.ts): what a use case does,
 * without the emulators. The protocol under concurrency and crashes is the emulator suites' to
 * prove (test/integration/adversity-*.test.ts).
 */

const ORDERS = aDefinition({ name: 'orders', completion: { strategy: 'all' }, timeoutSeconds: 60 });
const OPENED = 1_000_000;

/** An open aggregate of `orders` expecting `expected` replies. */
function anOpenHeader(aggregateId: string, expected = 2): AggregateHeader {
  return {
    aggregateId,
    definition: ORDERS.name,
    status: AggregateStatus.OPEN,
    expected,
    received: 0,
    lateCount: 0,
    openedAt: OPENED,
    deadline: OPENED + 60_000,
    params: {},
  };
}

/** A reply as the reply queue delivers it. */
function aReply(aggregateId: string, replyId: string, body: unknown = { quote: replyId }): RawMessage {
  return {
    messageId: `m-${aggregateId}-${replyId}-${Math.random()}`,
    body: JSON.stringify(body),
    attributes: { [WireAttribute.AGGREGATE_ID]: aggregateId, [WireAttribute.REPLY_ID]: replyId },
    receiveCount: 1,
  };
}

describe('the reply use case over in-memory ports', () => {
  it('records a reply of an open aggregate and leaves it open while replies are missing', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-1'));

    // Act
    const failed = await handleReplies(ctx, [aReply('a-1', '0')]);

    // Assess
    expect(failed.size).toBe(0);
    const { header, replies } = await ports.store.readAggregate('a-1');
    expect(header?.status).toBe(AggregateStatus.OPEN);
    expect(replies.map((r) => r.replyId)).toEqual(['0']);
    expect(ports.outputs.published).toEqual([]);
  });

  it('records a redelivered reply once: the first payload stays', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-2', 3));

    // Act
    await handleReplies(ctx, [aReply('a-2', '0')]);
    await handleReplies(ctx, [aReply('a-2', '0', { quote: 'again' })]);

    // Assess: one item, the first payload
    const { replies } = await ports.store.readAggregate('a-2');
    expect(replies).toHaveLength(1);
    expect(JSON.parse(replies[0]?.payload ?? '')).toEqual({ quote: '0' });
    expect(ports.outputs.published).toEqual([]);
  });

  it('completes the aggregate with its last reply: one result, sealed with every reply, closed', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-3'));
    await handleReplies(ctx, [aReply('a-3', '0')]);

    // Act
    ports.now.at = OPENED + 5_000;
    await handleReplies(ctx, [aReply('a-3', '1')]);

    // Assess
    const completed = ports.outputs.to(QueueRole.COMPLETED);
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ aggregateId: 'a-3', definition: 'orders' });
    const header = await ports.store.getHeader('a-3');
    expect(header?.status).toBe(AggregateStatus.CLOSED);
    expect([...(header?.members ?? [])].sort()).toEqual(['0', '1']);
    expect(await ports.store.dueItems(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it('routes a reply that comes after completion to the late output, once, and the result stays as sealed', async () => {
    // Prepare: an aggregate of one reply, completed
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('a-4', 1));
    await handleReplies(ctx, [aReply('a-4', '0')]);

    // Act: a reply id the seal did not fix, delivered twice
    const late = aReply('a-4', 'extra');
    await handleReplies(ctx, [late]);
    await handleReplies(ctx, [late]);

    // Assess
    expect(ports.outputs.to(QueueRole.COMPLETED)).toHaveLength(1);
    const lates = ports.outputs.to(QueueRole.LATE);
    expect(lates.length).toBeGreaterThanOrEqual(1);
    expect(new Set(lates.map((m) => m.id)).size).toBe(1);
    const header = await ports.store.getHeader('a-4');
    expect(header?.members).toEqual(['0']);
    expect(header?.lateCount).toBe(1);
  });
});

describe('completionStageOf', () => {
  const base = anOpenHeader('s-1');
  it.each([
    ['open', base, undefined, 'open'],
    [
      'completing, lease running',
      { ...base, status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: 10 },
      9,
      'completing',
    ],
    [
      'completing, lease run out',
      { ...base, status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: 10 },
      10,
      'resumable',
    ],
    [
      'completing, no time given',
      { ...base, status: AggregateStatus.COMPLETING, lease: 'l', leaseUntil: 10 },
      undefined,
      'completing',
    ],
    ['completing without a lease', { ...base, status: AggregateStatus.COMPLETING }, 99, 'completing'],
    ['closed', { ...base, status: AggregateStatus.CLOSED }, 99, 'closed'],
  ] as const)('reads %s', (_, header, now, stage) => {
    expect(completionStageOf(header, now)).toBe(stage);
  });
});

describe('timer messages', () => {
  it.each([
    ['not JSON', 'nope'],
    ['no kind', { aggregateId: 'a', dueAt: 1 }],
    ['an unknown kind', { kind: 'other', aggregateId: 'a', dueAt: 1 }],
    ['a held timer without a reply id', { kind: 'held', aggregateId: 'a', dueAt: 1 }],
    ['a snapshot timer with period 0', { kind: 'snapshot', aggregateId: 'a', dueAt: 1, period: 0 }],
    [
      'a snapshot timer with a fractional period',
      { kind: 'snapshot', aggregateId: 'a', dueAt: 1, period: 1.5 },
    ],
    ['a due time that is not a number', { kind: 'deadline', aggregateId: 'a', dueAt: '1' }],
  ])('routes %s to the error output', async (_, body) => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    const raw = {
      messageId: 't-1',
      body: typeof body === 'string' ? body : JSON.stringify(body),
      attributes: {},
      receiveCount: 1,
    };

    // Act
    await handleTimer(ctx, raw);

    // Assess
    const errors = ports.outputs.to(QueueRole.ERROR);
    expect(errors).toHaveLength(1);
    expect(JSON.stringify(errors[0])).toMatch(/not a timer message|not valid JSON/);
  });

  it('acts on a valid deadline timer: an aggregate past its deadline times out', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([ORDERS]);
    await ports.store.openAggregate(anOpenHeader('t-2'));
    ports.now.at = OPENED + 61_000;
    const timer = { kind: 'deadline', aggregateId: 't-2', dueAt: OPENED + 60_000 };

    // Act
    await handleTimer(ctx, {
      messageId: 't-2',
      body: JSON.stringify(timer),
      attributes: {},
      receiveCount: 1,
    });

    // Assess
    expect((await ports.store.getHeader('t-2'))?.status).toBe(AggregateStatus.CLOSED);
    expect(ports.outputs.published.map((p) => p.role)).toEqual([QueueRole.TIMED_OUT]);
  });
});

describe('loadConfig', () => {
  const env = configToEnv({
    tableName: 'fanin-state',
    queueUrls: Object.fromEntries(
      Object.values(QueueRole).map((role) => [role, `https://q/${role}`]),
    ) as never,
    replyQueueUrls: ['https://q/reply-0'],
    definitions: [],
  });

  it('reads back what configToEnv wrote', () => {
    const config = loadConfig(env);
    expect(config.tableName).toBe('fanin-state');
    expect(config.replyQueueUrls).toEqual(['https://q/reply-0']);
  });

  it.each([
    ['a missing table', { [ConfigEnv.TABLE]: undefined }, 'FANIN_TABLE is not set'],
    [
      'a queue role without a URL',
      { [ConfigEnv.QUEUES]: JSON.stringify({ ingress: 'x' }) },
      'FANIN_QUEUES has no URL for queue role "control"',
    ],
    [
      'no reply queue',
      { [ConfigEnv.REPLY_QUEUES]: '[]' },
      'FANIN_REPLY_QUEUES must be a non-empty JSON array of queue URLs',
    ],
    [
      'definitions that are not an array',
      { [ConfigEnv.DEFINITIONS]: '{}' },
      'FANIN_DEFINITIONS must be a JSON array',
    ],
    [
      'a fractional lease',
      { [ConfigEnv.LEASE_SECONDS]: '1.5' },
      'FANIN_LEASE_SECONDS must be a positive integer (given "1.5")',
    ],
    [
      'a threshold that is no number',
      { [ConfigEnv.CLAIM_CHECK_THRESHOLD]: 'big' },
      'FANIN_CLAIM_CHECK_THRESHOLD must be a positive integer (given "big")',
    ],
    [
      'an account id of 11 digits',
      { [ConfigEnv.RECIPIENT_ACCOUNTS]: '["12345678901"]' },
      'FANIN_RECIPIENT_ACCOUNTS must be a JSON array of 12-digit account ids',
    ],
  ])('refuses %s, naming the variable', (_, change, message) => {
    expect(() => loadConfig({ ...env, ...change })).toThrow(new ConfigurationError(message));
  });
});
