import { describe, expect, it } from 'vitest';
import { checkInvariants } from '../../../sim/invariants.ts';
import { Ledger } from '../../../sim/ledger.ts';

/**
 * Each invariant of the simulation fires on a hand-built ledger that breaks it, and none fires
 * on a clean one. The seeds (simulate.test.ts, `npm run simulate`) show the invariants hold on
 * real runs; only this shows each one can fail, and on what.
 */

describe('the invariants', () => {
  const result = (body: Record<string, unknown>) =>
    JSON.stringify({ id: 'agg-1/result', aggregateId: 'agg-1', definition: 'd', ...body });
  const definitions = [
    {
      name: 'd',
      fanOut: { type: 'none' as const },
      completion: { strategy: 'all' as const },
      timeoutSeconds: 60,
    },
  ];

  it('a result published twice with different contents breaks one-result', () => {
    const ledger = new Ledger();
    ledger.publications.push(
      {
        channel: 'completed',
        text: result({ type: 'fanin.aggregate.completed', result: [] }),
        at: 0,
        task: 't',
      },
      {
        channel: 'events',
        text: result({ type: 'fanin.aggregate.completed', result: [{ replyId: '0', body: 1 }] }),
        at: 0,
        task: 't',
      },
    );
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toContain('one-result');
  });

  it('a member whose body no responder sent for that aggregate breaks members-sent', () => {
    const ledger = new Ledger();
    ledger.inputs.push({
      kind: 'reply',
      messageId: 'm1',
      at: 0,
      body: '{"v":1}',
      attributes: {},
      aggregateId: 'agg-1',
      replyId: '0',
    });
    ledger.publications.push({
      channel: 'completed',
      text: result({
        type: 'fanin.aggregate.completed',
        completedBy: 'all-arrived',
        result: [{ replyId: '0', body: { v: 2 } }],
      }),
      at: 0,
      task: 't',
    });
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toEqual(['members-sent']);
  });

  const event = (replyId: string, clock: number, header: { deadline?: number; exists?: boolean } = {}) => ({
    aggregateId: 'agg-1',
    replyId,
    at: clock,
    clock,
    exists: header.exists ?? true,
    open: header.exists ?? true,
    openedAt: 0,
    timeoutSeconds: 10,
    expected: 2,
    ...(header.deadline !== undefined ? { deadline: header.deadline } : {}),
  });
  const sent = (ledger: Ledger, replyId: string) =>
    ledger.inputs.push({
      kind: 'reply',
      messageId: `m${replyId}`,
      at: 0,
      body: '{"v":1}',
      attributes: {},
      aggregateId: 'agg-1',
      replyId,
    });

  it('a member received after the deadline in force breaks no-member-after-deadline; one held before the open, or sent before the deadline and redelivered after it, does not', () => {
    const ledger = new Ledger();
    sent(ledger, '0');
    sent(ledger, '1');
    // Reply 0 was held before the aggregate existed (in time); reply 1 came 2 s after the 10 s deadline.
    // Reply 2 was sent (accepted by SQS) at 9 s and first handled at 13 s: it arrived in time.
    sent(ledger, '2');
    ledger.receipts.push(event('0', 0, { exists: false }), event('1', 12_000, { deadline: 10_000 }), {
      ...event('2', 13_000, { deadline: 10_000 }),
      sentAt: 9_000,
    });
    ledger.publications.push({
      channel: 'timed-out',
      text: result({
        type: 'fanin.aggregate.timed-out',
        completedBy: 'deadline',
        closedAt: 60_000,
        result: [
          { replyId: '0', body: { v: 1 } },
          { replyId: '1', body: { v: 1 } },
          { replyId: '2', body: { v: 1 } },
        ],
      }),
      at: 60_000,
      task: 't',
    });
    const violations = checkInvariants(ledger, definitions).filter(
      (v) => v.invariant === 'no-member-after-deadline',
    );
    expect(violations.map((v) => v.detail.split(' is a member')[0])).toEqual(['reply 1']);
  });

  it('an all aggregate timed out although every expected reply was recorded before its deadline breaks condition-decides', () => {
    const ledger = new Ledger();
    sent(ledger, '0');
    sent(ledger, '1');
    ledger.recordings.push(event('0', 1_000, { deadline: 10_000 }), event('1', 2_000, { deadline: 10_000 }));
    ledger.publications.push({
      channel: 'timed-out',
      text: result({
        type: 'fanin.aggregate.timed-out',
        completedBy: 'deadline',
        closedAt: 10_000,
        counts: { expected: 2 },
        result: [
          { replyId: '0', body: { v: 1 } },
          { replyId: '1', body: { v: 1 } },
        ],
      }),
      at: 10_000,
      task: 't',
    });
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toEqual(['condition-decides']);
  });

  it('a result that reads a refused request breaks own-request', () => {
    const ledger = new Ledger();
    ledger.inputs.push(
      {
        kind: 'request',
        messageId: 'm1',
        at: 0,
        body: '{"tag":"mine"}',
        attributes: {},
        aggregateId: 'agg-1',
      },
      {
        kind: 'request',
        messageId: 'm2',
        at: 0,
        body: '{"tag":"thief"}',
        attributes: {},
        aggregateId: 'agg-1',
      },
    );
    ledger.publications.push(
      {
        channel: 'error',
        text: JSON.stringify({
          id: 'e1',
          type: 'fanin.error',
          reason: 'aggregate id in use',
          message: { messageId: 'm2' },
        }),
        at: 0,
        task: 't',
      },
      {
        channel: 'completed',
        text: result({
          type: 'fanin.aggregate.completed',
          completedBy: 'all-arrived',
          result: { tag: 'thief' },
        }),
        at: 0,
        task: 't',
      },
    );
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toEqual(['own-request']);
  });

  it('a request with neither a result nor an error output breaks result-after-quiescence', () => {
    const ledger = new Ledger();
    ledger.inputs.push({
      kind: 'request',
      messageId: 'm1',
      at: 0,
      body: '{}',
      attributes: {},
      aggregateId: 'agg-1',
    });
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toEqual(['result-after-quiescence']);
  });

  it('a result stored long before its deadline and decided only when the deadline came breaks condition-decides; one decided at once does not', () => {
    // Kills the mutant "case 2 reintroduced: a batch holding a failed reply skips the completion trigger"
    // through the simulation (a block left unmarked: every reply in, the aggregate decided at its deadline).
    const decided = (closedAt: number) => {
      const ledger = new Ledger();
      sent(ledger, '0');
      sent(ledger, '1');
      const deadline = 3_600_000;
      ledger.stored.push(event('0', 1_000, { deadline }), event('1', 2_000, { deadline }));
      ledger.publications.push({
        channel: 'completed',
        text: result({
          type: 'fanin.aggregate.completed',
          completedBy: 'all-arrived',
          openedAt: 0,
          closedAt,
          counts: { expected: 2 },
          result: [
            { replyId: '0', body: { v: 1 } },
            { replyId: '1', body: { v: 1 } },
          ],
        }),
        at: closedAt,
        task: 't',
      });
      return checkInvariants(ledger, definitions).map((v) => v.invariant);
    };
    expect(decided(3_600_050)).toEqual(['condition-decides']);
    expect(decided(2_100)).toEqual([]);
  });

  it('a result published twice on one channel breaks published-once unless a fault touched one of its publishers', () => {
    // Kills the mutant "no lease check" through the simulation (a resumer takes over within the lease
    // and publishes beside the owner).
    const twice = (excused: number[]) => {
      const ledger = new Ledger();
      const text = result({ type: 'fanin.aggregate.completed', completedBy: 'external', result: [] });
      ledger.publications.push(
        { channel: 'completed', text, at: 0, task: 'reply:0:1', taskId: 7 },
        { channel: 'completed', text, at: 5, task: 'reply:0:2', taskId: 9 },
        { channel: 'events', text, at: 6, task: 'reply:0:2', taskId: 9 },
      );
      ledger.excused = new Set(excused);
      return checkInvariants(ledger, definitions).map((v) => v.invariant);
    };
    expect(twice([])).toEqual(['published-once']);
    expect(twice([7])).toEqual([]);
  });

  it('a put that replaced a recorded reply breaks recorded-once', () => {
    // Kills the mutant "reply put without its condition (a duplicate overwrites)" through the simulation.
    const ledger = new Ledger();
    ledger.rewrites.push({ aggregateId: 'agg-1', key: 'A#agg-1 R#0000000000', at: 5 });
    expect(checkInvariants(ledger, definitions).map((v) => v.invariant)).toEqual(['recorded-once']);
  });

  /** A run that kept every invariant: a request, both replies sent and in its result, once. */
  function clean(): Ledger {
    const ledger = new Ledger();
    ledger.inputs.push({
      kind: 'request',
      messageId: 'req',
      at: 0,
      body: '{}',
      attributes: {},
      aggregateId: 'agg-1',
      definition: 'd',
    });
    sent(ledger, '0');
    sent(ledger, '1');
    ledger.publications.push({
      channel: 'completed',
      text: result({
        type: 'fanin.aggregate.completed',
        outcome: 'completed',
        completedBy: 'all-arrived',
        openedAt: 0,
        closedAt: 1_000,
        counts: { expected: 2, received: 2, failed: 0 },
        result: [
          { replyId: '0', body: { v: 1 } },
          { replyId: '1', body: { v: 1 } },
        ],
      }),
      at: 1_000,
      task: 'reply',
      taskId: 1,
    });
    return ledger;
  }
  const broken = (ledger: Ledger) => checkInvariants(ledger, definitions).map((v) => v.invariant);

  it('finds nothing wrong with a run whose request completed with every reply sent for it, published once', () => {
    expect(checkInvariants(clean(), definitions)).toEqual([]);
  });

  it('an error, late or unknown output without a reason breaks reasons', () => {
    const ledger = clean();
    ledger.publications.push(
      { channel: 'errors', text: JSON.stringify({ id: 'e1', type: 'fanin.error' }), at: 0, task: 't' },
      {
        channel: 'late',
        text: JSON.stringify({
          id: 'l1',
          type: 'fanin.reply.late',
          aggregateId: 'agg-1',
          replyId: '9',
          reason: '',
        }),
        at: 0,
        task: 't',
      },
    );
    expect(broken(ledger)).toEqual(['reasons', 'reasons']);
  });

  it('a message in a dead-letter queue breaks no-dead-letters', () => {
    const ledger = clean();
    ledger.deadLetters = [
      { queue: 'replies-dlq', body: '{}', attributes: { 'fanin-aggregate-id': 'agg-1' } },
    ];
    expect(checkInvariants(ledger, definitions)).toMatchObject([
      { invariant: 'no-dead-letters', aggregateId: 'agg-1' },
    ]);
  });

  it('a reply sent long before the close and in no output breaks nothing-lost; one published late does not', () => {
    const ledger = clean();
    ledger.publications[0] = {
      ...(ledger.publications[0] as (typeof ledger.publications)[number]),
      text: result({
        type: 'fanin.aggregate.completed',
        outcome: 'completed',
        completedBy: 'all-arrived',
        openedAt: 0,
        closedAt: 16 * 60_000,
        counts: { expected: 2, received: 1, failed: 0 },
        result: [{ replyId: '0', body: { v: 1 } }],
      }),
    };
    expect(broken(ledger)).toEqual(['nothing-lost']);
    ledger.publications.push({
      channel: 'late',
      text: JSON.stringify({
        id: 'l1',
        type: 'fanin.reply.late',
        aggregateId: 'agg-1',
        replyId: '1',
        reason: 'closed',
      }),
      at: 0,
      task: 't',
    });
    expect(broken(ledger)).toEqual([]);
  });

  it('a reply whose aggregate never got a result breaks nothing-lost and result-after-quiescence', () => {
    const ledger = clean();
    ledger.publications.length = 0;
    expect(broken(ledger).sort()).toEqual(['nothing-lost', 'nothing-lost', 'result-after-quiescence']);
  });

  it('a result completed in a way its strategy cannot, or under another definition than its sub-requests, breaks one-definition', () => {
    const ledger = clean();
    ledger.publications[0] = {
      ...(ledger.publications[0] as (typeof ledger.publications)[number]),
      text: String(ledger.publications[0]?.text).replace('"all-arrived"', '"first"'),
    };
    expect(broken(ledger)).toContain('one-definition');
    const other = clean();
    other.subRequests.push({ aggregateId: 'agg-1', replyId: '0', definition: 'e', at: 0 });
    expect(broken(other)).toEqual(['one-definition']);
  });

  it('a first result with two successful members breaks count-members; with one it does not', () => {
    const firstDefinitions = [
      { ...(definitions[0] as (typeof definitions)[number]), completion: { strategy: 'first' as const } },
    ];
    const ledger = new Ledger();
    sent(ledger, '0');
    sent(ledger, '1');
    const publish = (received: number) => {
      ledger.publications.length = 0;
      ledger.publications.push({
        channel: 'completed',
        text: result({
          type: 'fanin.aggregate.completed',
          outcome: 'completed',
          completedBy: 'first',
          openedAt: 0,
          closedAt: 1_000,
          counts: { expected: 2, received, failed: 0 },
          result: [
            { replyId: '0', body: { v: 1 } },
            { replyId: '1', body: { v: 1 } },
          ].slice(0, received),
        }),
        at: 1_000,
        task: 't',
      });
    };
    publish(2);
    expect(checkInvariants(ledger, firstDefinitions).map((v) => v.invariant)).toEqual(['count-members']);
    publish(1);
    expect(checkInvariants(ledger, firstDefinitions).map((v) => v.invariant)).not.toContain('count-members');
  });

  it('an all aggregate timed out though every reply was sent long before its deadline breaks all-arrived-completes', () => {
    const ledger = clean();
    ledger.publications[0] = {
      ...(ledger.publications[0] as (typeof ledger.publications)[number]),
      text: result({
        type: 'fanin.aggregate.timed-out',
        outcome: 'timed-out',
        completedBy: 'deadline',
        openedAt: 0,
        closedAt: 20 * 60_000,
        counts: { expected: 2, received: 2, failed: 0 },
        result: [
          { replyId: '0', body: { v: 1 } },
          { replyId: '1', body: { v: 1 } },
        ],
      }),
    };
    expect(broken(ledger)).toEqual(['all-arrived-completes']);
  });

  it('an invocation that never ended or a message left on a queue breaks quiescence', () => {
    const ledger = clean();
    ledger.hung = ['reply#3'];
    ledger.leftover = [{ queue: 'replies', count: 2 }];
    expect(checkInvariants(ledger, definitions)).toMatchObject([
      { invariant: 'quiescence', detail: 'invocations that never ended: reply#3' },
      { invariant: 'quiescence', detail: '2 message(s) still on replies when nothing was left to run' },
    ]);
  });

  it('an aggregate the sweeper could never end breaks result-after-quiescence', () => {
    const ledger = clean();
    ledger.stuck.add('agg-2');
    expect(checkInvariants(ledger, definitions)).toMatchObject([
      { invariant: 'result-after-quiescence', aggregateId: 'agg-2' },
    ]);
  });
});
