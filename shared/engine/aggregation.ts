import { Algorithm } from './constants.ts';
import type { CondenseFunction, Definition, EffectiveParameters } from './definition.ts';
import { compileExpression, type ExpressionLimits } from './expression.ts';
import { parsePath, readPath } from './path.ts';

/** One recorded reply, as the algorithms see it. */
export interface ReplyRecord {
  readonly replyId: string;
  readonly body: unknown;
  /** When it was recorded (epoch ms): the tie-break of last resort. */
  readonly receivedAt: number;
}

/** What the algorithm may know about the aggregate besides its replies. */
export interface AggregationContext {
  readonly aggregateId: string;
  readonly definition: string;
  readonly expected?: number;
  readonly params: EffectiveParameters;
  /** Parameters the request opened the aggregate with (initialized mode). */
  readonly request?: unknown;
  /** The budget of a `custom` expression. @default EXPRESSION_LIMITS */
  readonly limits?: ExpressionLimits;
  /**
   * The time a `custom` expression's `$now()` and `$millis()` return (epoch ms): the seal's
   * `completingAt` for a result, so every build of it — its owner's, a resumer's, on every
   * channel — is the same bytes. `$random()` and `$shuffle()` draw from a sequence seeded by the
   * aggregate id.
   */
  readonly at: number;
}

/** Running values of `condense`: constant in size however many replies are folded in. */
export interface CondenseState {
  readonly count: number;
  readonly sum: number;
  readonly min: number | null;
  readonly max: number | null;
}

/** The empty accumulator of {@link condenseStep}. */
export const EMPTY_CONDENSE: CondenseState = { count: 0, sum: 0, min: null, max: null };

/**
 * Folds one value into the running values. Non-numeric values are skipped: they are not counted,
 * so `avg` is over the replies that carried a number.
 */
export function condenseStep(state: CondenseState, value: unknown): CondenseState {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n)) return state;
  return {
    count: state.count + 1,
    sum: state.sum + n,
    min: state.min === null ? n : Math.min(state.min, n),
    max: state.max === null ? n : Math.max(state.max, n),
  };
}

/** Projects running values onto the functions a definition asked for. */
export function condenseResult(
  state: CondenseState,
  functions: readonly CondenseFunction[],
): Partial<Record<CondenseFunction, number | null>> {
  const all: Record<CondenseFunction, number | null> = {
    count: state.count,
    sum: state.sum,
    avg: state.count === 0 ? null : state.sum / state.count,
    min: state.min,
    max: state.max,
  };
  return Object.fromEntries(functions.map((fn) => [fn, all[fn]]));
}

/**
 * Orders replies for `collect`: numeric reply ids (a splitter's item index) numerically, others
 * by id, so the result does not depend on arrival order.
 */
export function byReplyOrder(a: ReplyRecord, b: ReplyRecord): number {
  const na = Number(a.replyId);
  const nb = Number(b.replyId);
  const aIndex = Number.isInteger(na);
  const bIndex = Number.isInteger(nb);
  if (aIndex && bIndex && na !== nb) return na - nb;
  // Numeric ids before the others, so the order is total whatever ids are mixed.
  if (aIndex !== bIndex) return aIndex ? -1 : 1;
  if (a.replyId !== b.replyId) return a.replyId < b.replyId ? -1 : 1;
  return a.receivedAt - b.receivedAt;
}

/**
 * Compares two replies by `best` criteria, in order: the first criterion that differs decides
 * (e.g. lowest rate, then shortest term). A reply missing a criterion's value ranks after every
 * reply that has it. Equal on every criterion: the earlier reply wins, then the lower reply id.
 */
export function compareByCriteria(
  criteria: readonly { readonly path: string; readonly order: 'min' | 'max' }[],
  a: ReplyRecord,
  b: ReplyRecord,
): number {
  for (const criterion of criteria) {
    const va = comparable(readPath(a.body, criterion.path));
    const vb = comparable(readPath(b.body, criterion.path));
    if (va === undefined && vb === undefined) continue;
    if (va === undefined) return 1;
    if (vb === undefined) return -1;
    // A number and a non-numeric string do not compare: the number ranks first.
    if (typeof va !== typeof vb) return typeof va === 'number' ? -1 : 1;
    if (va !== vb) {
      const ascending = va < vb ? -1 : 1;
      return criterion.order === 'min' ? ascending : -ascending;
    }
  }
  if (a.receivedAt !== b.receivedAt) return a.receivedAt - b.receivedAt;
  return a.replyId < b.replyId ? -1 : a.replyId > b.replyId ? 1 : 0;
}

function comparable(value: unknown): number | string | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string') {
    // A numeric string is a number, as in condense and scoreOf.
    const n = value.trim() === '' ? Number.NaN : Number(value);
    return Number.isFinite(n) ? n : value;
  }
  return undefined;
}

/**
 * The aggregation algorithm: turns the recorded replies into the one result.
 *
 * - `collect`: every reply, `{ replyId, body }`, in reply order;
 * - `best`: the single best reply by the criteria, or `null` when there is none;
 * - `condense`: the requested running values over one field;
 * - `custom`: a JSONata expression over `{ replies, replyIds, aggregateId, definition, expected, parameters, request }`
 *   (bounded in time and depth; throws an ExpressionError), a pure function of them and of
 *   `context.at` and the aggregate id (its clock and random functions answer from those).
 */
export async function aggregate(
  definition: Definition,
  replies: readonly ReplyRecord[],
  context: AggregationContext,
): Promise<unknown> {
  const spec = definition.aggregation;
  switch (spec.algorithm) {
    case Algorithm.COLLECT:
      return [...replies].sort(byReplyOrder).map(({ replyId, body }) => ({ replyId, body }));
    case Algorithm.BEST: {
      const [best] = [...replies].sort((a, b) => compareByCriteria(spec.criteria, a, b));
      return best === undefined ? null : { replyId: best.replyId, body: best.body };
    }
    case Algorithm.CONDENSE: {
      // Folded in reply order: a floating-point sum depends on its order, and the order replies
      // are read in (packs, own items, shards) is not theirs.
      const state = [...replies]
        .sort(byReplyOrder)
        .reduce((acc, reply) => condenseStep(acc, readPath(reply.body, spec.field)), EMPTY_CONDENSE);
      return condenseResult(state, spec.functions);
    }
    case Algorithm.CUSTOM: {
      const ordered = [...replies].sort(byReplyOrder);
      const input = {
        replies: ordered.map((r) => r.body),
        replyIds: ordered.map((r) => r.replyId),
        aggregateId: context.aggregateId,
        definition: context.definition,
        expected: context.expected ?? null,
        parameters: context.params,
        request: context.request ?? null,
      };
      const result = await compileExpression(spec.expression, context.limits).evaluate(input, undefined, {
        at: context.at,
        seed: context.aggregateId,
      });
      return result === undefined ? null : result;
    }
  }
}

/**
 * Reply ids an initialized aggregate expected but did not receive. A splitter's or recipient
 * list's reply ids are the indexes `0..expected-1`.
 */
export function missingReplyIds(expected: number, received: Iterable<string>): string[] {
  const seen = new Set(received);
  const missing: string[] = [];
  for (let index = 0; index < expected; index += 1) {
    if (!seen.has(String(index))) missing.push(String(index));
  }
  return missing;
}

/**
 * The part of a reply body an aggregate must keep. `condense` keeps only the field it folds
 * (an auction's "keep only the highest bid"), so a reply's stored size does not depend on its
 * payload; the other algorithms need the whole body.
 */
export function retainedBody(definition: Definition, body: unknown): unknown {
  const spec = definition.aggregation;
  if (spec.algorithm !== Algorithm.CONDENSE) return body;
  const value = readPath(body, spec.field);
  if (value === undefined) return {};
  const segments = parsePath(spec.field);
  let retained: unknown = value;
  for (let i = segments.length - 1; i >= 0; i -= 1) retained = { [segments[i] as string]: retained };
  return retained;
}
