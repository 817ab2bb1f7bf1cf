import type { Definition } from '../engine/definition.ts';

/** What {@link timeoutsWithinDrains} found: the definitions, and the interval they are short of. */
export interface TimeoutsWithinDrains {
  /** The definitions' names, in their order. */
  readonly definitions: readonly string[];
  /** The longest reply drain interval, in seconds. */
  readonly longestDrainSeconds: number;
  /** The warning, as the construct (at synth) and the local runtime (at start) give it. */
  readonly message: string;
}

/** The id of the warning, for the construct's annotation and the local runtime's line. */
export const TIMEOUT_WITHIN_DRAIN_INTERVAL = 'fanin:timeoutWithinDrainInterval';

/**
 * The definitions whose deadline (or inactivity timeout, or the shortest deadline a request may
 * ask for, `requestParameters.timeoutSeconds.min`) is shorter than twice the longest reply drain
 * interval: their aggregates can time out with replies still waiting on a drained partition for
 * the next drain. The router may put any definition's aggregates on any partition, so every
 * definition is checked against the longest. Undefined when there is nothing to warn of.
 */
export function timeoutsWithinDrains(
  definitions: readonly Definition[],
  drainIntervals: readonly number[],
): TimeoutsWithinDrains | undefined {
  const longest = Math.max(0, ...drainIntervals);
  if (longest === 0) return undefined;
  const short = definitions
    .filter((d) => {
      const shortest = Math.min(
        d.timeoutSeconds ?? Number.POSITIVE_INFINITY,
        d.inactivityTimeoutSeconds ?? Number.POSITIVE_INFINITY,
        d.requestParameters?.timeoutSeconds?.min ?? Number.POSITIVE_INFINITY,
      );
      return shortest < 2 * longest;
    })
    .map((d) => d.name);
  if (short.length === 0) return undefined;
  return {
    definitions: short,
    longestDrainSeconds: longest,
    message: `definitions ${JSON.stringify(short)} may time out in less than twice the longest reply drain interval (${longest} s): their replies can wait on a drained partition past the deadline`,
  };
}
