import jsonata from 'jsonata';
import { ExpressionError } from '../errors.ts';
import { EXPRESSION_LIMITS } from './constants.ts';

/** Budget for one evaluation: wall time and evaluation depth. */
export interface ExpressionLimits {
  readonly timeoutMs: number;
  readonly maxDepth: number;
}

/**
 * A compiled JSONata expression whose every evaluation is bounded in time and depth, so a
 * runaway user expression fails one message instead of hanging a handler.
 *
 * @example
 * const best = compileExpression('$min(replies.rate)');
 * await best.evaluate({ replies: [{ rate: 3.1 }, { rate: 2.9 }] }); // 2.9
 */
export interface BoundedExpression {
  readonly source: string;
  evaluate(input: unknown, bindings?: Record<string, unknown>): Promise<unknown>;
}

const cache = new Map<string, BoundedExpression>();

/**
 * Compiles (and caches) a JSONata expression. Throws {@link ExpressionError} when it does not parse.
 */
export function compileExpression(
  source: string,
  limits: ExpressionLimits = EXPRESSION_LIMITS,
): BoundedExpression {
  const key = `${limits.timeoutMs}/${limits.maxDepth}/${source}`;
  const cached = cache.get(key);
  if (cached) return cached;
  let compiled: jsonata.Expression;
  try {
    compiled = jsonata(source, { timeout: limits.timeoutMs, stack: limits.maxDepth });
  } catch (error) {
    throw new ExpressionError(source, describe(error), { cause: error });
  }
  const bounded: BoundedExpression = {
    source,
    async evaluate(input, bindings) {
      try {
        return normalise(await compiled.evaluate(input, bindings));
      } catch (error) {
        throw new ExpressionError(source, describe(error), { cause: error });
      }
    },
  };
  cache.set(key, bounded);
  return bounded;
}

/** JSONata errors are plain objects with a code; turn them into one readable line. */
function describe(error: unknown): string {
  if (error && typeof error === 'object') {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code === 'D1012') return 'exceeded its time budget';
    if (code === 'D1011') return 'exceeded its depth budget';
    const text = typeof message === 'string' ? message : String(error);
    return typeof code === 'string' ? `${code}: ${text}` : text;
  }
  return String(error);
}

/** JSONata sequences are arrays with extra flags; hand back plain JSON values. */
function normalise(value: unknown): unknown {
  if (value === undefined) return undefined;
  return JSON.parse(JSON.stringify(value));
}
