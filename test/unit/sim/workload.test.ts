import { describe, expect, it } from 'vitest';
import { parseDefinitions } from '../../../shared/engine/definition.ts';
import { Random } from '../../../sim/random.ts';
import { drawWorkload, TARGETS } from '../../../sim/workload.ts';

/**
 * The workload over many seeds: a function of its seed; definitions the wire contract accepts
 * (the product's own parser); actions in time order, each to an ingress, control or existing reply
 * partition; replies naming their definition, aggregate and reply; the huge aggregates only when
 * asked; no scenario without its stream. The simulated runs use one workload each; this looks at
 * hundreds.
 */

const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);
const workloads = (options: Parameters<typeof drawWorkload>[1] = {}) =>
  SEEDS.map((seed) => drawWorkload(new Random(seed), options));

describe('drawWorkload', () => {
  it('is a function of its seed', () => {
    expect(drawWorkload(new Random(5), { scenarios: new Random(5, 1) })).toEqual(
      drawWorkload(new Random(5), { scenarios: new Random(5, 1) }),
    );
  });

  it('draws three to seven definitions the product accepts, under distinct names', () => {
    for (const w of workloads()) {
      const names = w.definitions.map((d) => d.name);
      expect(new Set(names).size).toBe(names.length);
      expect(names.length >= 3 && names.length <= 7).toBe(true);
      expect(() => parseDefinitions(w.definitions)).not.toThrow();
    }
  });

  it('draws definitions that look after their responders, and requests that set their deadline within its bounds', () => {
    let deadlines = 0;
    let retries = 0;
    let heartbeats = 0;
    let byBank = 0;
    let requested = 0;
    for (const w of workloads()) {
      for (const d of w.definitions) {
        const responders = d.responders;
        if (responders === undefined) continue;
        if (responders.timeoutSeconds !== undefined) deadlines += 1;
        if (responders.timeouts !== undefined) byBank += 1;
        if (responders.retry !== undefined) retries += 1;
        if (responders.heartbeatSeconds !== undefined) heartbeats += 1;
        const bounds = d.requestParameters?.recipientTimeoutSeconds;
        for (const a of w.actions) {
          if (a.kind !== 'request' || !a.body.includes(`"definition":"${d.name}"`)) continue;
          const own = (JSON.parse(a.body) as { parameters?: { recipientTimeoutSeconds?: number } }).parameters
            ?.recipientTimeoutSeconds;
          if (own === undefined) continue;
          requested += 1;
          expect(bounds).toBeDefined();
          expect(own >= (bounds?.min ?? 0) && own <= (bounds?.max ?? 0)).toBe(true);
        }
      }
    }
    for (const count of [deadlines, retries, heartbeats, byBank, requested]) expect(count).toBeGreaterThan(5);
  });

  it('orders its actions in time and sends each to ingress, control or one of its reply partitions', () => {
    for (const w of workloads()) {
      expect(w.replyPartitions >= 1 && w.replyPartitions <= 3).toBe(true);
      for (let i = 1; i < w.actions.length; i += 1)
        expect((w.actions[i]?.at as number) >= (w.actions[i - 1]?.at as number)).toBe(true);
      for (const a of w.actions) {
        if (typeof a.queue === 'number') expect(a.queue >= 0 && a.queue < w.replyPartitions).toBe(true);
        else expect(['ingress', 'control']).toContain(a.queue);
      }
    }
  });

  it('gives every request and reply its aggregate, and every reply its reply id and definition', () => {
    for (const w of workloads()) {
      const names = new Set(w.definitions.map((d) => d.name));
      for (const a of w.actions) {
        if (a.kind === 'request') {
          const body = JSON.parse(a.body);
          expect(body.aggregateId).toBe(a.aggregateId);
          expect(a.queue).toBe('ingress');
        }
        if (a.kind === 'reply') {
          expect(a.aggregateId).toBeDefined();
          expect(a.replyId).toBeDefined();
          expect(names.has(a.attributes['fanin-definition'] as string)).toBe(true);
        }
      }
    }
  });

  it('sends a claim-checked action only in a run with a bucket', () => {
    for (const w of workloads()) {
      if (!w.bucket) expect(w.actions.some((a) => a.claimCheck)).toBe(false);
    }
    expect(workloads().some((w) => w.actions.some((a) => a.claimCheck))).toBe(true);
  });

  it('makes the huge aggregates only when asked for big ones', () => {
    const items = (ws: ReturnType<typeof workloads>) =>
      Math.max(
        ...ws.flatMap((w) =>
          w.actions.filter((a) => a.kind === 'request').map((a) => (JSON.parse(a.body).items ?? []).length),
        ),
      );
    expect(items(workloads())).toBeLessThanOrEqual(5);
    expect(items(workloads({ big: true }))).toBeGreaterThan(128);
  });

  it('draws no scenario without its stream', () => {
    for (const w of workloads().slice(0, 50)) {
      expect(w.scenarios.definitions).toEqual([]);
      expect(w.scenarios.actions).toEqual([]);
    }
  });

  it('sends sub-requests only to the responder queues the world creates', () => {
    for (const w of workloads()) {
      for (const d of w.definitions) {
        const fanOut = (d as { fanOut?: { target?: string; recipients?: string[] } }).fanOut;
        for (const target of [fanOut?.target, ...(fanOut?.recipients ?? [])].filter(Boolean))
          expect(TARGETS as readonly string[]).toContain(target);
      }
    }
  });
});
