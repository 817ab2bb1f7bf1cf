import { describe, expect, it } from 'vitest';
import { BadMessageError } from '../../../../shared/errors.ts';
import type { Log, PayloadStore, RawMessage } from '../../../../shared/ports.ts';
import { QueueRole } from '../../../../shared/topology/topology.ts';
import { routeError, routeIfUnfixable } from '../../../../shared/use-cases/error-output.ts';
import { memoryContext } from '../../../support/memory-store.ts';

/**
 * The error output (docs/wire-contract.md, "Outputs" and "Limits"): `fanin.error` with the
 * message's source, its reason (cut to 2,048 characters), and the message itself — cut to 128 KiB
 * as JSON without a payload bucket, attributes to 1 KiB each when they exceed 32 KiB, with
 * `truncated: true` and the original `bytes`. Its id derives from the source message id.
 */
const KIB = 1024;
const NOW = 1_764_450_000_000;

function aBadMessage(body = 'not json', attributes: Record<string, string> = {}): RawMessage {
  return {
    messageId: 'm-1',
    body,
    attributes: { 'fanin-aggregate-id': 'a-1', ...attributes },
    receiveCount: 1,
  };
}

/** A log that keeps its warnings. */
function aLog(): Log & { warnings: Record<string, unknown>[] } {
  const warnings: Record<string, unknown>[] = [];
  return {
    warnings,
    info: () => undefined,
    error: () => undefined,
    warn: (_m, fields = {}) => warnings.push(fields),
  };
}

const noBucket = (log = aLog()) => memoryContext([], { log, clock: () => NOW });

describe('routing a message to the error output', () => {
  it('publishes fanin.error with its source, reason, time and the message, under an id of the message', async () => {
    const { ctx, ports } = noBucket();
    await routeError(ctx, 'reply', aBadMessage(), 'body is not valid JSON (at position 1)');
    expect(ports.outputs.to(QueueRole.ERROR)).toEqual([
      {
        id: 'error/reply/m-1',
        type: 'fanin.error',
        source: 'reply',
        reason: 'body is not valid JSON (at position 1)',
        at: NOW,
        message: { messageId: 'm-1', body: 'not json', attributes: { 'fanin-aggregate-id': 'a-1' } },
      },
    ]);
  });

  it('gives a redelivered bad message the same id', async () => {
    const { ctx, ports } = noBucket();
    await routeError(ctx, 'timer', aBadMessage(), 'r');
    await routeError(ctx, 'timer', aBadMessage(), 'r');
    const ids = ports.outputs.to(QueueRole.ERROR).map((m) => m.id);
    expect(ids).toEqual(['error/timer/m-1', 'error/timer/m-1']);
  });

  it('cuts a reason to 2,048 characters', async () => {
    const { ctx, ports } = noBucket();
    await routeError(ctx, 'ingress', aBadMessage(), 'x'.repeat(5000));
    expect(ports.outputs.to(QueueRole.ERROR)[0]?.reason).toBe(`${'x'.repeat(2048)}…`);
  });

  it('keeps a reason of exactly 2,048 characters whole', async () => {
    const { ctx, ports } = noBucket();
    await routeError(ctx, 'ingress', aBadMessage(), 'x'.repeat(2048));
    expect(ports.outputs.to(QueueRole.ERROR)[0]?.reason).toBe('x'.repeat(2048));
  });

  it('logs the reason without the values it quotes', async () => {
    const log = aLog();
    const { ctx } = noBucket(log);
    await routeError(ctx, 'reply', aBadMessage(), 'reply names definition "secret-name"');
    expect(log.warnings).toEqual([
      { source: 'reply', messageId: 'm-1', reason: 'reply names definition "…"' },
    ]);
  });

  it('cuts a body too large for SQS to fit once escaped as JSON, and says it did', async () => {
    const { ctx, ports } = noBucket();
    const body = '"'.repeat(100 * KIB); // 100 KiB that doubles when escaped
    await routeError(ctx, 'ingress', aBadMessage(body), 'too big');
    const message = ports.outputs.to(QueueRole.ERROR)[0]?.message as Record<string, unknown>;
    expect(message.truncated).toBe(true);
    expect(message.bytes).toBe(100 * KIB);
    expect(Buffer.byteLength(JSON.stringify(message.body))).toBeLessThanOrEqual(128 * KIB);
    expect(body.startsWith(message.body as string)).toBe(true);
    expect((message.body as string).length).toBeGreaterThan(50 * KIB);
  });

  it('keeps a body that fits whole, without marks', async () => {
    const { ctx, ports } = noBucket();
    const body = 'a'.repeat(100 * KIB);
    await routeError(ctx, 'ingress', aBadMessage(body), 'r');
    const message = ports.outputs.to(QueueRole.ERROR)[0]?.message as Record<string, unknown>;
    expect(message.body).toBe(body);
    expect('truncated' in message).toBe(false);
  });

  it('cuts each attribute name and value to 1 KiB when the message must be cut and its attributes exceed 32 KiB', async () => {
    const { ctx, ports } = noBucket();
    const attributes = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`${i}${'n'.repeat(2 * KIB)}`, 'v'.repeat(4 * KIB)]),
    );
    await routeError(ctx, 'reply', aBadMessage('b'.repeat(200 * KIB), attributes), 'r');
    const message = ports.outputs.to(QueueRole.ERROR)[0]?.message as {
      attributes: Record<string, string>;
      truncated?: boolean;
    };
    expect(message.truncated).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(message))).toBeLessThanOrEqual(129 * KIB);
    const entries = Object.entries(message.attributes);
    expect(entries).toHaveLength(11);
    for (const [name, value] of entries) {
      expect(name.length).toBeLessThanOrEqual(KIB);
      expect(value.length).toBeLessThanOrEqual(KIB);
    }
  });

  it('carries the whole message when a payload bucket takes what SQS cannot', async () => {
    const payloads = {
      decode: async (b: string) => b,
      put: async () => ({ s3BucketName: 'b', s3Key: 'k' }),
      get: async () => '',
    } satisfies PayloadStore;
    const { ctx, ports } = memoryContext([], { payloads });
    const body = '"'.repeat(200 * KIB);
    await routeError(ctx, 'ingress', aBadMessage(body), 'r');
    const message = ports.outputs.to(QueueRole.ERROR)[0]?.message as Record<string, unknown>;
    expect(message.body).toBe(body);
    expect('truncated' in message).toBe(false);
  });
});

describe('what a use case does with an error', () => {
  it('routes bad input no retry can fix, with its message as the reason', async () => {
    const { ctx, ports } = noBucket();
    await routeIfUnfixable(ctx, 'control', aBadMessage(), new BadMessageError('unknown command "x"'));
    expect(ports.outputs.to(QueueRole.ERROR).map((m) => [m.source, m.reason])).toEqual([
      ['control', 'unknown command "x"'],
    ]);
  });

  it('throws anything else on, for the message to be redelivered, and routes nothing', async () => {
    const { ctx, ports } = noBucket();
    const outage = new Error('DynamoDB throttled');
    await expect(routeIfUnfixable(ctx, 'reply', aBadMessage(), outage)).rejects.toBe(outage);
    expect(ports.outputs.published).toEqual([]);
  });
});
