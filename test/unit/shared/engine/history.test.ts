import { describe, expect, it } from 'vitest';
import { parseDefinition } from '../../../../shared/engine/definition.ts';
import { assembleHistory, type HistoryHeader, type HistoryInput } from '../../../../shared/engine/history.ts';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const s = (seconds: number) => T0 + seconds * 1000;

const quotes = parseDefinition({
  name: 'quotes',
  fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b', 'bank-c'] },
  completion: { strategy: 'count', count: 2 },
  timeoutSeconds: 60,
});

/** A closed aggregate of `quotes`: three asked, replies 0 and 2 members, 1 late after the seal. */
function closedQuotes(
  overrides: Partial<HistoryInput> = {},
  header: Partial<HistoryHeader> = {},
): HistoryInput {
  return {
    aggregateId: 'q-1',
    header: {
      aggregateId: 'q-1',
      definition: 'quotes',
      status: 'closed',
      outcome: 'completed',
      completedBy: 'count',
      expected: 3,
      openedAt: s(0),
      deadline: s(60),
      params: {},
      askedUpTo: 3,
      completingAt: s(5),
      members: ['0', '2'],
      expiresAt: Math.floor(s(5) / 1000) + 30 * 86_400,
      ...header,
    },
    requestId: 'req-7',
    kept: { params: { timeoutSeconds: 60, count: 2 } },
    copies: [
      { replyId: '0', receivedAt: s(2), messageId: 'm-0' },
      { replyId: '2', receivedAt: s(4), messageId: 'm-2', pack: 'Q#2' },
      { replyId: '2', receivedAt: s(4.5), messageId: 'm-2' },
      { replyId: '1', receivedAt: s(9), messageId: 'm-1', failure: 'bank-b is closed today' },
    ],
    marks: [{ replyId: '1', owes: 'late-sent' }],
    held: [],
    definition: quotes,
    resultOutputs: { completed: 'completed', 'timed-out': 'timed-out', purged: 'status', failed: 'error' },
    whole: true,
    ...overrides,
  };
}

const kinds = (input: HistoryInput) => assembleHistory(input).events.map((e) => e.kind);

describe('assembleHistory', () => {
  it('says an aggregate with no items at all is not found', () => {
    const history = assembleHistory({ aggregateId: 'gone', copies: [], marks: [], held: [] });

    expect(history.status).toBe('not found');
    expect(history.events).toEqual([]);
  });

  it('tells a closed aggregate in order: opened, asked, replies, sealed, published, closed, then the late reply', () => {
    expect(kinds(closedQuotes())).toEqual([
      'opened',
      'asked',
      'reply',
      'reply',
      'sealed',
      'published',
      'closed',
      'reply',
      'late',
    ]);
  });

  it("tells each recipient's fate at the seal when the definition looks after its responders: deadline, heartbeat, retries, failed attempt", () => {
    // Prepare: 20 s each, heartbeats of 10 s, a retry; bank-b failed its first attempt, was asked
    // again and sent heartbeats until 25 s; the seal at 40 s
    const input = closedQuotes(
      {},
      {
        completingAt: s(40),
        params: {
          recipientTimeoutSeconds: 20,
          heartbeatSeconds: 10,
          retry: { attempts: 1, intervalSeconds: 5, backoffRate: 2 },
        },
        beats: { '1': s(25) },
        retried: { '1': 1 },
        failedAttempts: { '1': 1 },
      },
    );

    // Act
    const event = assembleHistory(input).events.find((e) => e.kind === 'recipients');

    // Assess
    expect(event?.occurredAt).toBe(s(40));
    expect(event?.fates).toEqual([
      { replyId: '0', fate: 'replied', deadline: s(20) },
      { replyId: '1', fate: 'timed-out', deadline: s(35), heartbeatAt: s(25), retries: 1, failedAttempt: 1 },
      { replyId: '2', fate: 'replied', deadline: s(20) },
    ]);
    expect(event?.text).toContain(
      `1 timed-out, own deadline ${new Date(s(35)).toISOString()}, last heartbeat ${new Date(s(25)).toISOString()}, asked again 1 time, attempt 1 failed and was asked again`,
    );
    expect(kinds(closedQuotes())).not.toContain('recipients');
  });

  it('names the opening request, the definition and the parameters the seal kept after the close removed them', () => {
    const opened = assembleHistory(closedQuotes()).events[0];

    expect(opened).toMatchObject({
      kind: 'opened',
      occurredAt: s(0),
      requestId: 'req-7',
      definition: 'quotes',
    });
    expect(opened?.params).toEqual({ timeoutSeconds: 60, count: 2 });
    expect(opened?.text).toContain('request req-7');
    expect(opened?.text).toContain('"count":2');
  });

  it("names each sub-request's recipient from the definition, and each reply's", () => {
    const history = assembleHistory(closedQuotes());
    const asked = history.events.find((e) => e.kind === 'asked');
    const reply2 = history.events.find((e) => e.kind === 'reply' && e.replyId === '2');

    expect(asked?.subRequests).toEqual([
      { replyId: '0', to: 'bank-a' },
      { replyId: '1', to: 'bank-b' },
      { replyId: '2', to: 'bank-c' },
    ]);
    expect(asked?.text).toContain('1 → bank-b');
    expect(reply2).toMatchObject({ recipient: 'bank-c', member: true, copies: 2, occurredAt: s(4) });
  });

  it('counts a reply recorded twice once, saying where each copy was recorded', () => {
    const history = assembleHistory(closedQuotes());
    const reply2 = history.events.find((e) => e.kind === 'reply' && e.replyId === '2');

    expect(history.replies).toBe(3);
    expect(reply2?.text).toContain('recorded 2 times');
    expect(reply2?.text).toContain('in pack 2');
  });

  it('marks a failed reply outside the member set late, with its error, and its late output sent', () => {
    const history = assembleHistory(closedQuotes());
    const reply1 = history.events.find((e) => e.kind === 'reply' && e.replyId === '1');
    const late = history.events.find((e) => e.kind === 'late');

    expect(reply1).toMatchObject({ failure: 'bank-b is closed today', member: false, late: true });
    expect(late).toMatchObject({
      replyId: '1',
      occurredAt: s(9),
      output: { id: 'q-1/late/1', to: 'late', sent: true },
    });
    expect(history.late).toBe(1);
  });

  it('keeps a late reply judged by the tombstone (a mark, no copy), without a time', () => {
    const history = assembleHistory(closedQuotes({ marks: [{ replyId: 'x' }], copies: [] }));
    const late = history.events.find((e) => e.kind === 'late');

    expect(late).toMatchObject({ replyId: 'x', output: { id: 'q-1/late/x', sent: true } });
    expect(late?.occurredAt).toBeUndefined();
    expect(history.events.at(-1)?.kind).toBe('late');
    expect(history.cannotTell.join('\n')).toContain('judged late by the sealed header or the tombstone');
  });

  it('says a late output a completer owes is not known sent', () => {
    const history = assembleHistory(closedQuotes({ marks: [{ replyId: '1', owes: 'late' }] }));

    expect(history.events.find((e) => e.kind === 'late')?.output).toMatchObject({ sent: false });
  });

  it('gives the seal its rule, outcome and member set, and the result its id and output', () => {
    const history = assembleHistory(closedQuotes());
    const sealed = history.events.find((e) => e.kind === 'sealed');
    const published = history.events.find((e) => e.kind === 'published');

    expect(sealed).toMatchObject({
      occurredAt: s(5),
      outcome: 'completed',
      completedBy: 'count',
      members: 2,
    });
    // The member set in the header's compact form (docs/data-plane.md: [[0,9]] for a fan-out of ten).
    expect(sealed?.memberSet).toBe('[[0,0],[2,2]]');
    expect(published?.output).toEqual({ id: 'q-1/result', to: 'completed', sent: true });
    expect(history.events.find((e) => e.kind === 'closed')?.expiresAt).toBe(
      Math.floor(s(5) / 1000) + 30 * 86_400,
    );
    expect(history.expiresAt).toBe(Math.floor(s(5) / 1000) + 30 * 86_400);
  });

  it('sends a purged result to the status output and a failed one to the error output', () => {
    const purged = assembleHistory(closedQuotes({}, { outcome: 'purged', completedBy: 'purge' }));
    const failed = assembleHistory(
      closedQuotes({}, { outcome: 'failed', completedBy: 'failures', reason: 'too many failures' }),
    );

    expect(purged.events.find((e) => e.kind === 'published')?.output?.to).toBe('status');
    expect(failed.events.find((e) => e.kind === 'published')?.output?.to).toBe('error');
    expect(failed.events.find((e) => e.kind === 'sealed')?.text).toContain('too many failures');
  });

  it('shows a completing aggregate whose result is not yet published, and nothing closed', () => {
    const history = assembleHistory(closedQuotes({}, { status: 'completing', expiresAt: undefined }));

    expect(history.events.find((e) => e.kind === 'published')?.output?.sent).toBe(false);
    expect(history.events.some((e) => e.kind === 'closed')).toBe(false);
  });

  it('tells an open aggregate its replies without member or late flags', () => {
    const history = assembleHistory(
      closedQuotes(
        { copies: [{ replyId: '0', receivedAt: s(2) }], marks: [] },
        {
          status: 'open',
          outcome: undefined,
          completedBy: undefined,
          completingAt: undefined,
          members: undefined,
        },
      ),
    );

    expect(history.events.map((e) => e.kind)).toEqual(['opened', 'asked', 'reply']);
    expect(history.events[2]).toMatchObject({ late: false });
    expect(history.events[2]?.member).toBeUndefined();
  });

  it('tells the deadline moves of an inactivity timeout, from the first deadline to the one in force', () => {
    const history = assembleHistory(
      closedQuotes({ kept: { firstDeadline: s(10), deadlineMoves: 3 } }, { deadline: s(40) }),
    );
    const moved = history.events.find((e) => e.kind === 'deadline-moved');

    expect(moved).toMatchObject({ occurredAt: s(10), moves: 3, firstDeadlineAt: s(10), deadline: s(40) });
    expect(history.events.find((e) => e.kind === 'opened')?.deadline).toBe(s(10));
  });

  it('tells replies held before the open: those still held, and those counted at the open', () => {
    const history = assembleHistory(
      closedQuotes({
        held: [{ replyId: '9', messageId: 'm-9', receivedAt: s(-3), dueAt: s(57), claimed: 'unknown' }],
        copies: [{ replyId: '0', receivedAt: s(-2), messageId: 'm-0' }],
        marks: [],
      }),
    );

    expect(history.events.slice(0, 3).map((e) => e.kind)).toEqual(['held', 'reply', 'opened']);
    expect(history.events[0]?.text).toContain('reported unknown');
    expect(history.events[1]).toMatchObject({ replyId: '0', held: true });
  });

  it('tells a reply reported unknown before its aggregate opened, and never counts it', () => {
    const history = assembleHistory(
      closedQuotes({
        marks: [{ replyId: '2', owes: 'sent' }],
        copies: [{ replyId: '2', receivedAt: s(3), pack: 'Q#2' }],
      }),
    );
    const unknown = history.events.find((e) => e.kind === 'unknown');

    expect(unknown).toMatchObject({
      replyId: '2',
      output: { id: 'q-1/unknown/2', to: 'unknown', sent: true },
    });
    expect(unknown?.text).toContain('never counted');
    expect(history.events.some((e) => e.kind === 'reply')).toBe(false);
    expect(history.replies).toBe(0);
  });

  it('says what it cannot tell when the request named the recipients and was not kept', () => {
    const byRequest = parseDefinition({
      name: 'quotes',
      fanOut: { type: 'recipient-list' },
      completion: { strategy: 'all' },
    });
    const history = assembleHistory(closedQuotes({ definition: byRequest }));

    expect(history.events.find((e) => e.kind === 'asked')?.text).toContain('recipients not stored');
    expect(history.cannotTell.join('\n')).toContain('the recipients of its sub-requests');
  });

  it('names the recipients from the labels a kept request holds', () => {
    const byRequest = parseDefinition({
      name: 'quotes',
      fanOut: { type: 'recipient-list' },
      completion: { strategy: 'all' },
    });
    const history = assembleHistory(
      closedQuotes({ definition: byRequest, request: { labels: ['q-a', 'q-b', 'q-c'] } }),
    );

    expect(history.events.find((e) => e.kind === 'reply' && e.replyId === '2')?.recipient).toBe('q-c');
  });

  it('tells each snapshot taken, at its period when the definition gives the interval', () => {
    const snapshots = parseDefinition({ ...quotes, snapshotIntervalSeconds: 30 });
    const history = assembleHistory(closedQuotes({ definition: snapshots, kept: { lastSnapshot: 2 } }));
    const taken = history.events.filter((e) => e.kind === 'snapshot');

    expect(taken.map((e) => [e.occurredAt, e.output?.id])).toEqual([
      [s(30), 'q-1/snapshot/1'],
      [s(60), 'q-1/snapshot/2'],
    ]);
  });

  it('says when a store gave one copy per reply rather than every item', () => {
    expect(assembleHistory(closedQuotes({ whole: false })).cannotTell.join('\n')).toContain(
      'one copy per reply',
    );
    expect(assembleHistory(closedQuotes()).cannotTell.join('\n')).not.toContain('one copy per reply');
  });

  it('says a fan-out stopped short may never have sent the rest', () => {
    const history = assembleHistory(closedQuotes({}, { askedUpTo: 2 }));

    expect(history.events.find((e) => e.kind === 'asked')).toMatchObject({ count: 2, of: 3 });
    expect(history.cannotTell.join('\n')).toContain('whether sub-requests 2 … 2 were ever sent');
  });
});
