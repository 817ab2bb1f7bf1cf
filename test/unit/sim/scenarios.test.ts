import { describe, expect, it } from 'vitest';
import { parseDefinitions } from '../../../shared/engine/definition.ts';
import { Random } from '../../../sim/random.ts';
import { drawScenarios, noScenarios, SCENARIO_RATES } from '../../../sim/scenarios.ts';

/**
 * The rare scenarios over many seeds of their own stream: each drawn about as often as its rate,
 * their definitions accepted by the product's parser beside the workload's, no definition added
 * twice or under a name the workload already has, actions to existing reply partitions; and none
 * at all gives exactly nothing.
 */

const present = ['split', 'first'];
const draw = (seed: number) => drawScenarios(new Random(seed, 1), { present, bus: true, replyPartitions: 2 });

describe('drawScenarios', () => {
  it('is a function of its stream', () => {
    expect(draw(3)).toEqual(draw(3));
  });

  it('draws each scenario about as often as its rate', () => {
    const runs = Array.from({ length: 3000 }, (_, i) => draw(i + 1));
    for (const [name, rate] of Object.entries(SCENARIO_RATES)) {
      const share = runs.filter((s) => s.names.includes(name)).length / runs.length;
      expect(share, name).toBeGreaterThan(rate / 3);
      expect(share, name).toBeLessThan(rate * 3);
    }
  });

  it('adds definitions the product accepts, never one the workload has, each once, and sends to existing partitions', () => {
    for (let seed = 1; seed <= 1500; seed += 1) {
      const s = draw(seed);
      const names = s.definitions.map((d) => d.name);
      expect(new Set(names).size).toBe(names.length);
      for (const name of names) expect(present).not.toContain(name);
      if (s.definitions.length > 0) expect(() => parseDefinitions(s.definitions)).not.toThrow();
      for (const a of s.actions)
        if (typeof a.queue === 'number') expect(a.queue >= 0 && a.queue < 2).toBe(true);
    }
  });
});

describe('noScenarios', () => {
  it('is nothing at all', () => {
    const none = noScenarios();
    expect(none).toMatchObject({ names: [], definitions: [], actions: [], targets: [], bucket: false });
    expect(none.bulkFailures.size + none.bulkDelays.size).toBe(0);
  });
});
