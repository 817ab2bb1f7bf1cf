import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CANCELLATION_TYPE } from '../../../../shared/engine/cancellation.ts';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import { policyFromQueueUrl } from '../../../../shared/engine/recipients.ts';
import { BadMessageError, FaninError } from '../../../../shared/errors.ts';
import type { AggregateHeader, SubRequest } from '../../../../shared/ports.ts';
import { cancellationNotice, sendCancellations } from '../../../../shared/use-cases/cancel.ts';
import type { FaninContext } from '../../../../shared/use-cases/context.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * A cancellation notice on the wire (docs/wire-contract.md, "Cancellation notices") and the send
 * of an ended aggregate's notices, over a recording sender: the module's own fast test (the
 * integration test test/integration/guarantees/cancellation.test.ts reads them off the emulators).
 */
const BANKS = aDefinition({
  name: 'banks',
  completion: { strategy: 'first' },
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  cancelOutstanding: true,
});

function aSealedHeader(overrides: Partial<AggregateHeader> = {}): AggregateHeader {
  return {
    aggregateId: 'loan-7',
    definition: 'banks',
    status: AggregateStatus.COMPLETING,
    outcome: 'completed',
    completedBy: 'first',
    expected: 3,
    askedUpTo: 3,
    received: 1,
    lateCount: 0,
    openedAt: 1_000,
    params: {},
    members: ['1'],
    ...overrides,
  };
}

function recording(fail?: unknown): { ctx: FaninContext; sent: SubRequest[][]; errors: unknown[] } {
  const sent: SubRequest[][] = [];
  const errors: unknown[] = [];
  const ctx = {
    sender: {
      send: async (requests: readonly SubRequest[]) => {
        sent.push([...requests]);
        if (fail) throw fail;
      },
    },
    recipients: policyFromQueueUrl('https://sqs.eu-west-1.amazonaws.com/123456789012/fanin-ingress'),
    log: { info: () => undefined, error: (...args: unknown[]) => errors.push(args) },
  } as unknown as FaninContext;
  return { ctx, sent, errors };
}

describe('cancellationNotice', () => {
  it('carries the aggregate id, reply id, definition and the outcome and completedBy as attributes, and says so in its body', () => {
    const notice = cancellationNotice(aSealedHeader(), { replyId: '2', target: 'bank-c' });
    expect(notice.target).toBe('bank-c');
    expect(notice.attributes).toEqual({
      'fanin-aggregate-id': 'loan-7',
      'fanin-reply-id': '2',
      'fanin-definition': 'banks',
      'fanin-cancelled': 'completed',
      'fanin-completed-by': 'first',
    });
    expect(JSON.parse(notice.body)).toEqual({
      type: CANCELLATION_TYPE,
      aggregateId: 'loan-7',
      replyId: '2',
      definition: 'banks',
      outcome: 'completed',
      completedBy: 'first',
    });
    expect(CANCELLATION_TYPE).toBe('fanin.cancellation');
    expect(notice.groupId).toBe('loan-7');
  });

  it('has one deduplication id per aggregate and reply id, the same on every attempt, and never the sub-request’s', () => {
    const header = aSealedHeader({ outcome: 'timed-out', completedBy: 'deadline' });
    const once = cancellationNotice(header, { replyId: '0', target: 'bank-a' });
    expect(cancellationNotice(header, { replyId: '0', target: 'bank-a' }).deduplicationId).toBe(
      once.deduplicationId,
    );
    expect(cancellationNotice(header, { replyId: '1', target: 'bank-b' }).deduplicationId).not.toBe(
      once.deduplicationId,
    );
    expect(
      cancellationNotice(aSealedHeader({ aggregateId: 'loan-8' }), { replyId: '0', target: 'bank-a' })
        .deduplicationId,
    ).not.toBe(once.deduplicationId);
    // the sub-request of reply id 0 of loan-7 (fan-out.ts): sha256 of "loan-7/0"
    expect(once.deduplicationId).not.toBe(createHash('sha256').update('loan-7/0').digest('hex'));
    expect(once.deduplicationId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names a purge as the purge', () => {
    const notice = cancellationNotice(aSealedHeader({ outcome: 'purged', completedBy: 'purge' }), {
      replyId: '0',
      target: 'bank-a',
    });
    expect(notice.attributes['fanin-cancelled']).toBe('purged');
    expect(notice.attributes['fanin-completed-by']).toBe('purge');
  });
});

describe('sendCancellations', () => {
  it('sends one notice to each asked recipient without a reply, in one call', async () => {
    const { ctx, sent } = recording();
    const count = await sendCancellations(ctx, aSealedHeader(), BANKS, new Set(['1']), undefined);
    expect(count).toBe(2);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.map((r) => [r.target, r.attributes['fanin-reply-id']])).toEqual([
      ['bank-a', '0'],
      ['bank-c', '2'],
    ]);
  });

  it('calls no port at all for a definition without the option, nor when everyone replied', async () => {
    const { cancelOutstanding: _, ...plain } = BANKS;
    const { ctx, sent } = recording();
    expect(await sendCancellations(ctx, aSealedHeader(), plain, new Set(), undefined)).toBe(0);
    expect(await sendCancellations(ctx, aSealedHeader(), BANKS, new Set(['0', '1', '2']), undefined)).toBe(0);
    expect(sent).toHaveLength(0);
  });

  it('logs and goes on when a queue can never be sent to; any other failure goes on to the caller', async () => {
    const gone = recording(new BadMessageError('the queue does not exist'));
    expect(await sendCancellations(gone.ctx, aSealedHeader(), BANKS, new Set(), undefined)).toBe(0);
    expect(gone.errors).toHaveLength(1);
    const throttled = recording(new FaninError('throttled'));
    await expect(
      sendCancellations(throttled.ctx, aSealedHeader(), BANKS, new Set(), undefined),
    ).rejects.toThrow('throttled');
  });
});
