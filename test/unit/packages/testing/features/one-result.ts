import { expect } from 'vitest';
import type { FaninSimulation } from '../../../../../packages/testing/src/index.ts';

/**
 * The one terminal output of an aggregate, counted below SQS's deduplication (every send fanin
 * made): exactly one publication of `<aggregateId>/result` on exactly one queue, as the
 * integration suite's `expectExactlyOneTerminalOutput` counts them on the emulators.
 */
export function oneResult(
  run: FaninSimulation,
  aggregateId: string,
): { output: Record<string, unknown>; channel: string } {
  const sends = run
    .publications()
    .filter((p) => p.channel !== 'events' && p.body.id === `${aggregateId}/result`);
  expect(
    sends.map((p) => p.channel),
    `terminal publications of ${aggregateId}`,
  ).toHaveLength(1);
  const [only] = sends;
  return { output: only?.body ?? {}, channel: String(only?.channel) };
}

/** Nothing published for the aggregate's result id (no result, no error). */
export function noResult(run: FaninSimulation, aggregateId: string): void {
  expect(run.publications().filter((p) => p.body.id === `${aggregateId}/result`)).toEqual([]);
}
