import type { arrivalResults } from '../run/arrival.ts';
import type { assemble } from '../run/assemble.ts';
import type { timerVariantFigures } from '../run/timers.ts';

/**
 * The shape of `bench/results/*.json` (schema 2): what `assemble` (`bench/run/assemble.ts`) builds, its
 * arrival patterns by `arrivalResults` (`bench/run/arrival.ts`), every field in snake_case.
 */
export type Results = ReturnType<typeof assemble>;

export type ArrivalPatternName = keyof ReturnType<typeof arrivalResults>;
type ArrivalPatternResult = Results['arrival'][ArrivalPatternName];
/** One arrival phase's figures (`arrival.<pattern>.measured[]`), per reply unless named otherwise. */
export type ArrivalFigures = ArrivalPatternResult['measured'][number];
/** One row of `arrival.<pattern>.by_batching`: one reply batching setting at fan-out 10. */
export type BatchingComparison = ArrivalPatternResult['by_batching'][number];
/** One deadline-timer variant (`timers.batched`, `timers.paced`). */
export type TimerVariantFigures = ReturnType<typeof timerVariantFigures>;
