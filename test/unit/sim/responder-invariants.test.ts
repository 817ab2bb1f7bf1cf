import { describe, expect, it } from 'vitest';
import { parseDefinitions } from '../../../shared/engine/definition.ts';
import { Ledger, type ResponderSend } from '../../../sim/ledger.ts';
import { checkResponders } from '../../../sim/responder-invariants.ts';

/**
 * Each responder invariant of the simulation fires on a hand-built ledger that breaks it, and
 * none fires on a clean one (the seeds show they hold on real runs; this shows each can fail).
 */

const definitions = parseDefinitions([
  {
    name: 'banks',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    completion: { strategy: 'all' },
    timeoutSeconds: 60,
    responders: { timeoutSeconds: 20, heartbeatSeconds: 10, retry: { attempts: 2, intervalSeconds: 5 } },
  },
  {
    name: 'plain',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    completion: { strategy: 'all' },
    timeoutSeconds: 60,
  },
]);

const send = (overrides: Partial<ResponderSend> = {}): ResponderSend => ({
  aggregateId: 'agg-1',
  replyId: '0',
  queue: 'q/bank-a',
  at: 1000,
  afterPublications: 0,
  taskId: 1,
  task: 'fanout',
  taskStartedAt: 900,
  attempt: 1,
  body: '{"amount":3}',
  replyTo: 'q/replies',
  ...overrides,
});

type Results = Parameters<typeof checkResponders>[2];

function result(output: Record<string, unknown>, at = 30_000): Results {
  const full = {
    id: 'agg-1/result',
    type: 'fanin.aggregate.completed',
    aggregateId: 'agg-1',
    definition: 'banks',
    ...output,
  };
  return new Map([
    [
      'agg-1',
      { copies: [{ channel: 'completed', text: JSON.stringify(full), at, task: 't' }], output: full },
    ],
  ]);
}

function check(ledger: Ledger, results: Results = new Map()): string[] {
  const found: string[] = [];
  checkResponders(ledger, definitions, results, (invariant) => found.push(invariant));
  return found;
}

/** A ledger where recipient 0 was asked, retried once at 6 s, and answered at 8 s. */
function clean(): Ledger {
  const ledger = new Ledger();
  ledger.asked.push(
    send(),
    send({ replyId: '1', queue: 'q/bank-b' }),
    send({ at: 6000, taskId: 2, task: 'timer', taskStartedAt: 5900, attempt: 2 }),
  );
  ledger.subRequests.push({ aggregateId: 'agg-1', replyId: '0', definition: 'banks', at: 1200 });
  return ledger;
}

describe('the responder invariants', () => {
  it('hold on a retry that repeats its first attempt to a recipient still out', () => {
    const results = result({
      result: [],
      recipients: [{ replyId: '0', fate: 'replied', deadline: 20_000, retries: 1 }],
    });
    expect(check(clean(), results)).toEqual([]);
  });

  it('a retry of a definition that does not retry breaks retry-same', () => {
    const ledger = clean();
    expect(check(ledger, result({ definition: 'plain' }))).toEqual(['retry-same']);
  });

  it('a retry to another queue, or with another body, breaks retry-same', () => {
    const elsewhere = clean();
    elsewhere.asked.push(send({ queue: 'q/bank-b', attempt: 2, at: 7000, taskStartedAt: 6900 }));
    expect(check(elsewhere)).toEqual(['retry-same']);
    const other = clean();
    other.asked.push(send({ body: '{"amount":4}', attempt: 2, at: 7000, taskStartedAt: 6900 }));
    expect(check(other)).toEqual(['retry-same']);
  });

  it('an attempt beyond the retries allowed, or before the one before it, breaks retry-bounded', () => {
    const beyond = clean();
    beyond.asked.push(send({ attempt: 3, at: 9000 }), send({ attempt: 4, at: 12_000 }));
    expect(check(beyond)).toEqual(['retry-bounded']);
    const early = clean();
    early.asked.splice(0);
    early.asked.push(send(), send({ attempt: 3, at: 4000 }), send({ attempt: 2, at: 6000 }));
    expect(check(early)).toEqual(['retry-bounded']);
  });

  it('a result saying a recipient was retried more often than it was sent breaks retry-bounded', () => {
    const results = result({
      recipients: [{ replyId: '0', fate: 'timed-out', deadline: 20_000, retries: 2 }],
    });
    expect(check(clean(), results)).toEqual(['retry-bounded']);
  });

  it('a retry sent by an invocation begun after a reply of it was stored breaks retry-unanswered', () => {
    const ledger = clean();
    ledger.stored.push({
      aggregateId: 'agg-1',
      replyId: '0',
      at: 5000,
      clock: 5000,
      exists: true,
      open: true,
    });
    expect(check(ledger)).toEqual(['retry-unanswered']);
    // A reply stored after that invocation began may be one its read did not see: not a breach.
    const racing = clean();
    racing.stored.push({
      aggregateId: 'agg-1',
      replyId: '0',
      at: 5950,
      clock: 5950,
      exists: true,
      open: true,
    });
    expect(check(racing)).toEqual([]);
  });

  it('a retry sent by an invocation begun after the result was published breaks retry-before-seal', () => {
    expect(check(clean(), result({ result: [] }, 5000))).toEqual(['retry-before-seal']);
  });

  it("a member carrying a heartbeat's body breaks heartbeat-not-member", () => {
    const ledger = new Ledger();
    ledger.inputs.push(
      {
        kind: 'heartbeat',
        messageId: 'h1',
        at: 3000,
        body: '{"v":7}',
        attributes: {},
        aggregateId: 'agg-1',
        replyId: '0',
      },
      {
        kind: 'reply',
        messageId: 'r1',
        at: 9000,
        body: '{"v":8}',
        attributes: {},
        aggregateId: 'agg-1',
        replyId: '0',
      },
    );
    const member = (v: number) => result({ result: [{ replyId: '0', body: { v } }] });
    expect(check(ledger, member(7))).toEqual(['heartbeat-not-member']);
    expect(check(ledger, member(8))).toEqual([]);
  });

  it("a member that arrived after its recipient's own deadline breaks recipient-deadline", () => {
    const ledger = new Ledger();
    const receipt = (clock: number, sentAt: number) => ({
      aggregateId: 'agg-1',
      replyId: '0',
      at: clock,
      clock,
      sentAt,
      exists: true,
      open: true,
    });
    ledger.receipts.push(receipt(21_000, 20_500), receipt(25_000, 20_500));
    const results = (deadline: number) =>
      result({
        result: [{ replyId: '0', body: {} }],
        recipients: [{ replyId: '0', fate: 'replied', deadline }],
      });
    expect(check(ledger, results(20_000))).toEqual(['recipient-deadline']);
    // Its arrival is when SQS accepted it (20.5 s), not when it was handled.
    expect(check(ledger, results(21_000))).toEqual([]);
  });
});
