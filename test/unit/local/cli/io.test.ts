import { describe, expect, it } from 'vitest';
import { withIsoTimes } from '../../../../local/cli/io.ts';

/** docs/cli.md, "Times in --json": every epoch time keeps its number and gains its ISO 8601 form. */
describe('--json times', () => {
  it('gives deadline its ISO form beside openedAt and the others', () => {
    const out = withIsoTimes({ openedAt: 1_767_225_600_000, deadline: 1_767_225_660_000 }) as Record<
      string,
      unknown
    >;
    expect(out.deadline).toBe(1_767_225_660_000);
    expect(out.deadlineIso).toBe('2026-01-01T00:01:00.000Z');
    expect(out.openedAtIso).toBe('2026-01-01T00:00:00.000Z');
  });

  it('reads expiresAt as DynamoDB TTL seconds, inside lists too', () => {
    const out = withIsoTimes([{ replies: [{ expiresAt: 1_767_225_600 }] }]) as {
      replies: Record<string, unknown>[];
    }[];
    expect(out[0]?.replies[0]?.expiresAtIso).toBe('2026-01-01T00:00:00.000Z');
  });

  it('adds no ISO twin to a time that is not set (null)', () => {
    const out = withIsoTimes({ expiresAt: null }) as Record<string, unknown>;
    expect(out).toEqual({ expiresAt: null });
  });
});
