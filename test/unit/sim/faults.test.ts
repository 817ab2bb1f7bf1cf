import { describe, expect, it } from 'vitest';
import {
  drawProfile,
  drawPublishPauses,
  FAULT_KINDS,
  type FaultProfile,
  faultPlan,
  noFaults,
} from '../../../sim/faults.ts';
import { Random } from '../../../sim/random.ts';
import type { PendingCall } from '../../../sim/scheduler.ts';

/**
 * The fault plan's own rules, on calls made by hand: a profile of zero rates never faults; each
 * rate at 1 gives its fault (a crash after the effect only for a write, a timeout after the effect
 * only for a write, a pause past the lease or the visibility timeout); a channel down fails only
 * its own calls, only in its window; the publishers' pauses stay within the lease; every fault is
 * counted. The seeds exercise all of these at their drawn rates; this shows each does what it says.
 */

const START = Date.UTC(2026, 0, 1);
const LEASE = 60_000;
const VISIBILITY = 120_000;

const calm: FaultProfile = {
  crash: 0,
  failBefore: 0,
  failAfter: 0,
  pause: 0,
  skewMs: 0,
  duplicateDelivery: 0,
  duplicateSend: 0,
  ttl: 0,
  buggify: {
    crashAfterWrites: false,
    ambiguousWrites: false,
    busDown: false,
    duplicateDeliveries: false,
    smallBatches: false,
    eagerTtl: false,
  },
};

const call = (service: string, command: string) => ({ service, command }) as unknown as PendingCall;

function plan(
  profile: Partial<FaultProfile>,
  extra: { now?: number; channel?: string; pauses?: number } = {},
) {
  const counts = noFaults();
  const fate = faultPlan({
    random: new Random(1),
    profile: { ...calm, ...profile },
    counts,
    now: () => extra.now ?? START,
    leaseMs: LEASE,
    visibilityMs: VISIBILITY,
    outputChannel: () => extra.channel,
    ...(extra.pauses !== undefined ? { publishPauses: { random: new Random(2), rate: extra.pauses } } : {}),
  });
  return { fate, counts };
}

describe('faultPlan', () => {
  it('applies every call under a profile of zero rates', () => {
    const { fate, counts } = plan({});
    for (let i = 0; i < 200; i += 1) expect(fate(call('dynamodb', 'PutCommand'))).toEqual({ kind: 'apply' });
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
  });

  it('crashes at every call when the crash rate is 1, after the effect only for a write', () => {
    const { fate, counts } = plan({ crash: 1 });
    const reads = Array.from({ length: 50 }, () => fate(call('dynamodb', 'GetCommand')));
    expect(reads.every((f) => f.kind === 'crash' && !f.afterEffect)).toBe(true);
    const writes = Array.from({ length: 50 }, () => fate(call('dynamodb', 'PutCommand')));
    expect(writes.every((f) => f.kind === 'crash')).toBe(true);
    expect(writes.some((f) => f.kind === 'crash' && f.afterEffect)).toBe(true);
    expect(counts.crash).toBe(100);
  });

  it('pauses past the lease or the visibility timeout by 1 to 30 seconds, never within the lease', () => {
    const { fate, counts } = plan({ pause: 1 });
    for (let i = 0; i < 100; i += 1) {
      const f = fate(call('sqs', 'ReceiveMessageCommand'));
      if (f.kind !== 'pause') throw new Error(`not a pause: ${f.kind}`);
      const past = f.ms >= VISIBILITY + 1000 ? VISIBILITY : LEASE;
      expect(f.ms - past).toBeGreaterThanOrEqual(1000);
      expect(f.ms - past).toBeLessThanOrEqual(30_000);
      expect(f.withinLease).toBeUndefined();
    }
    expect(counts['pause-lease'] + counts['pause-visibility']).toBe(100);
    expect(counts['pause-lease']).toBeGreaterThan(0);
    expect(counts['pause-visibility']).toBeGreaterThan(0);
  });

  it("fails a call before its effect with one of its service's throttling or server errors", () => {
    const { fate } = plan({ failBefore: 1 });
    const errors = new Set(
      Array.from({ length: 100 }, () => {
        const f = fate(call('dynamodb', 'GetCommand'));
        return f.kind === 'fail-before' ? f.error : f.kind;
      }),
    );
    expect([...errors].sort()).toEqual([
      'InternalServerError',
      'ProvisionedThroughputExceededException',
      'ThrottlingException',
    ]);
  });

  it('times out after the effect only a write', () => {
    const { fate, counts } = plan({ failAfter: 1 });
    expect(fate(call('sqs', 'SendMessageCommand'))).toEqual({ kind: 'fail-after', error: 'TimeoutError' });
    expect(fate(call('sqs', 'ReceiveMessageCommand'))).toEqual({ kind: 'apply' });
    expect(counts['fail-after']).toBe(1);
  });

  it('fails the calls of a channel that is down, only while it is down', () => {
    const down = { channel: 'events', from: START + 1000, to: START + 2000 };
    expect(
      plan({ channelDown: down }, { now: START + 1500, channel: 'events' }).fate(
        call('eventbridge', 'PutEventsCommand'),
      ),
    ).toEqual({
      kind: 'fail-before',
      error: 'ThrottlingException',
    });
    expect(
      plan({ channelDown: down }, { now: START + 1500, channel: 'late' }).fate(
        call('sqs', 'SendMessageCommand'),
      ).kind,
    ).toBe('apply');
    expect(
      plan({ channelDown: down }, { now: START + 2000, channel: 'events' }).fate(
        call('eventbridge', 'PutEventsCommand'),
      ).kind,
    ).toBe('apply');
  });

  it('pauses a publishing call within the lease when the run has publishers’ pauses, and no other call', () => {
    const publishing = plan({}, { channel: 'completed', pauses: 1 });
    for (let i = 0; i < 50; i += 1) {
      const f = publishing.fate(call('sqs', 'SendMessageCommand'));
      expect(f).toMatchObject({ kind: 'pause', withinLease: true });
      const ms = (f as { ms: number }).ms;
      expect(ms >= 500 && ms <= LEASE / 2).toBe(true);
    }
    expect(publishing.counts['pause-publish']).toBe(50);
    expect(plan({}, { pauses: 1 }).fate(call('sqs', 'SendMessageCommand')).kind).toBe('apply');
  });
});

describe('drawProfile', () => {
  it('is a function of its seed', () => {
    expect(drawProfile(new Random(4), START)).toEqual(drawProfile(new Random(4), START));
  });

  it('draws calm runs with no call faults at all, a channel down only within the first 400 s, and the buggify switches their rates', () => {
    const profiles = Array.from({ length: 300 }, (_, seed) => drawProfile(new Random(seed), START));
    expect(
      profiles.some((p) => p.crash === 0 && p.failBefore === 0 && p.failAfter === 0 && p.pause === 0),
    ).toBe(true);
    expect(profiles.some((p) => p.crash > 0)).toBe(true);
    for (const p of profiles) {
      expect([0, 500, 2000, 5000]).toContain(p.skewMs);
      expect(p.ttl).toBe(p.buggify.eagerTtl ? 1 : 0.05);
      if (p.buggify.duplicateDeliveries) expect(p.duplicateDelivery).toBe(0.2);
      if (p.channelDown) {
        expect(p.channelDown.from - START).toBeGreaterThanOrEqual(0);
        expect(p.channelDown.from).toBeLessThanOrEqual(p.channelDown.to);
        expect(p.channelDown.to - START).toBeLessThanOrEqual(400_000);
      }
    }
  });

  it('gives a quarter of the runs or so publishers’ pauses, at rate one half', () => {
    const rates = Array.from({ length: 400 }, (_, seed) => drawPublishPauses(new Random(seed)).rate);
    expect(new Set(rates)).toEqual(new Set([0, 0.5]));
    const share = rates.filter((r) => r > 0).length / rates.length;
    expect(share).toBeGreaterThan(0.15);
    expect(share).toBeLessThan(0.35);
  });
});

describe('noFaults', () => {
  it('counts every fault kind from zero', () => {
    expect(noFaults()).toEqual(Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])));
  });
});
