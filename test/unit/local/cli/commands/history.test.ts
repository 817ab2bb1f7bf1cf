import { describe, expect, it } from 'vitest';
import { historyLines } from '../../../../../local/cli/commands/history.ts';
import { withIsoTimes } from '../../../../../local/cli/io.ts';
import { assembleHistory, type HistoryInput } from '../../../../../shared/engine/history.ts';

const T0 = Date.UTC(2026, 0, 1, 12);

const input: HistoryInput = {
  aggregateId: 'a-1',
  header: {
    aggregateId: 'a-1',
    definition: 'orders',
    status: 'closed',
    outcome: 'timed-out',
    completedBy: 'deadline',
    expected: 2,
    openedAt: T0,
    deadline: T0 + 60_000,
    params: { timeoutSeconds: 60 },
    askedUpTo: 2,
    completingAt: T0 + 60_000,
    members: ['0'],
    expiresAt: Math.floor(T0 / 1000) + 30 * 86_400,
  },
  requestId: 'req-1',
  copies: [{ replyId: '0', receivedAt: T0 + 1500, messageId: 'm-0' }],
  marks: [{ replyId: '1' }],
  held: [],
  whole: true,
};

describe('fanin history', () => {
  it('prints a summary, one line per event with its time and its offset from the open, then the gaps', () => {
    const lines = historyLines(assembleHistory(input));

    expect(lines[0]).toBe(
      'aggregate a-1 (orders): closed (timed-out by deadline), 1 of 2 replies recorded, 1 late; history kept until 2026-01-31T12:00:00.000Z (its tombstone)',
    );
    expect(lines[1]).toMatch(/^2026-01-01T12:00:00\.000Z\s+\+0\.000s\s+opened\s+opened by request req-1/);
    expect(lines.find((l) => l.includes('reply 0 recorded'))).toMatch(
      /^2026-01-01T12:00:01\.500Z\s+\+1\.500s\s+reply /,
    );
    expect(lines).toContain('what the stored items cannot tell:');
    expect(lines.at(-1)).toMatch(/^ {2}- /);
  });

  it('shows an event whose time is not kept with dashes and no offset', () => {
    const late = historyLines(assembleHistory(input)).find((l) => l.includes('reply 1 late'));

    expect(late).toMatch(/^-{24}\s+late\s+reply 1 late/);
  });

  it('says when the definition is not in the configuration it was given', () => {
    const lines = historyLines(assembleHistory(input), new Map([['other', {}]]));

    expect(lines[1]).toContain('definition "orders" is not in this runtime\'s configuration');
  });

  it('gives --json every event time and the tombstone expiry in ISO 8601 beside the epoch numbers', () => {
    const json = withIsoTimes(assembleHistory(input)) as {
      expiresAtIso: string;
      events: { occurredAt?: number; occurredAtIso?: string; deadlineIso?: string }[];
    };

    expect(json.expiresAtIso).toBe('2026-01-31T12:00:00.000Z');
    expect(json.events[0]?.occurredAtIso).toBe('2026-01-01T12:00:00.000Z');
    expect(json.events[0]?.deadlineIso).toBe('2026-01-01T12:01:00.000Z');
    for (const event of json.events.filter((e) => e.occurredAt !== undefined))
      expect(event.occurredAtIso).toBe(new Date(event.occurredAt as number).toISOString());
  });
});
