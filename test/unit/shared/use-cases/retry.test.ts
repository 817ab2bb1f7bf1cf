import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import { policyFromQueueUrl } from '../../../../shared/engine/recipients.ts';
import { BadMessageError, FaninError } from '../../../../shared/errors.ts';
import type { AggregateHeader, SubRequest, TimerMessage } from '../../../../shared/ports.ts';
import type { FaninContext } from '../../../../shared/use-cases/context.ts';
import { takeRetryRound } from '../../../../shared/use-cases/retry.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * Taking a round of retries (shared/use-cases/retry.ts) over a recording sender and store: the
 * module's own fast test (the kit's test/unit/packages/testing/features/retries.test.ts and the
 * integration test test/integration/guarantees/retries.test.ts run it on the real handlers).
 */
const BANKS = aDefinition({
  name: 'banks',
  completion: { strategy: 'all' },
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  timeoutSeconds: 600,
  responders: { retry: { attempts: 2, intervalSeconds: 10 } },
});

function anOpenHeader(overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'loan-7',
    definition: 'banks',
    status: AggregateStatus.OPEN,
    expected: 3,
    askedUpTo: 3,
    received: 0,
    lateCount: 0,
    openedAt: 0,
    deadline: 600_000,
    replyTo: 'https://sqs.eu-west-1.amazonaws.com/123456789012/fanin-reply-0',
    requestId: 'req-7',
    params: { timeoutSeconds: 600, retry: { attempts: 2, intervalSeconds: 10, backoffRate: 2 } },
    ...overrides,
  };
}

function recording(options: { fail?: unknown; recorded?: boolean } = {}) {
  const steps: string[] = [];
  const sent: SubRequest[][] = [];
  const records: unknown[][] = [];
  const timers: TimerMessage[] = [];
  const errors: unknown[] = [];
  const ctx = {
    sender: {
      send: async (requests: readonly SubRequest[]) => {
        steps.push('send');
        sent.push([...requests]);
        if (options.fail) throw options.fail;
      },
    },
    store: {
      getRequest: async () => ({ payload: JSON.stringify({ body: { amount: 5 } }) }),
      recordRetries: async (...args: unknown[]) => {
        steps.push('record');
        records.push(args);
        return options.recorded ?? true;
      },
    },
    timers: { arm: async (timer: TimerMessage) => void timers.push(timer) },
    recipients: policyFromQueueUrl('https://sqs.eu-west-1.amazonaws.com/123456789012/fanin-ingress'),
    log: { info: () => undefined, error: (...args: unknown[]) => errors.push(args) },
  } as unknown as FaninContext;
  return { ctx, steps, sent, records, timers, errors };
}

const snapshotOf = (header: AggregateHeader) => ({ header, replies: [] });
const replied = (replyId: string) => ({ replyId }) as never;

describe('takeRetryRound', () => {
  it('sends the round to the silent recipients, on the queues their sub-requests went to, before it records the round', async () => {
    // Prepare
    const { ctx, steps, sent, records, timers } = recording();

    // Act
    const taken = await takeRetryRound(ctx, BANKS, snapshotOf(anOpenHeader()), [replied('0')], 10_000);

    // Assess
    expect(taken).toBe(true);
    expect(steps).toEqual(['send', 'record']);
    expect(
      sent[0]?.map((s) => [s.target, s.attributes['fanin-reply-id'], s.attributes['fanin-attempt']]),
    ).toEqual([
      ['bank-b', '1', '2'],
      ['bank-c', '2', '2'],
    ]);
    expect(sent[0]?.every((s) => s.attributes['fanin-reply-to'] === anOpenHeader().replyTo)).toBe(true);
    expect(sent[0]?.every((s) => s.body === '{"amount":5}')).toBe(true);
    // from round 0 to 1, each asked once, next due at the second round (10 s + 20 s)
    expect(records).toEqual([['loan-7', 0, 1, { '1': 1, '2': 1 }, 30_000]]);
    expect(timers).toEqual([{ kind: 'deadline', aggregateId: 'loan-7', dueAt: 30_000 }]);
  });

  it('arms no timer when another look recorded the round first (it armed its own)', async () => {
    const { ctx, sent, timers } = recording({ recorded: false });
    expect(await takeRetryRound(ctx, BANKS, snapshotOf(anOpenHeader()), [], 10_000)).toBe(true);
    expect(sent).toHaveLength(1);
    expect(timers).toEqual([]);
  });

  it('records the round taken, with no count, when its queues can never be sent to; a failure a retry may fix is thrown', async () => {
    // Prepare
    const gone = recording({ fail: new BadMessageError('queue bank-b does not exist') });
    const flaky = recording({ fail: new FaninError('throttled') });

    // Act
    await takeRetryRound(gone.ctx, BANKS, snapshotOf(anOpenHeader()), [], 10_000);
    const thrown = await takeRetryRound(flaky.ctx, BANKS, snapshotOf(anOpenHeader()), [], 10_000).catch(
      (e) => e,
    );

    // Assess
    expect(gone.records).toEqual([['loan-7', 0, 1, {}, 30_000]]);
    expect(gone.errors).toHaveLength(1);
    expect(thrown).toBeInstanceOf(FaninError);
    expect(flaky.records).toEqual([]);
  });

  it("takes nothing before the round is due, and nothing when the request is not the aggregate's", async () => {
    const early = recording();
    expect(await takeRetryRound(early.ctx, BANKS, snapshotOf(anOpenHeader()), [], 9_999)).toBe(false);
    expect(early.steps).toEqual([]);
    // a header of two recipients where the definition lists three: recomputed into none
    const other = recording();
    await takeRetryRound(
      other.ctx,
      BANKS,
      snapshotOf(anOpenHeader({ expected: 2, askedUpTo: 2 })),
      [],
      10_000,
    );
    expect(other.steps).toEqual(['record']);
  });
});
