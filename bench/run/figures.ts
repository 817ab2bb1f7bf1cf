import { type Counters, grouped } from '../measure/counters.ts';

/** The meter's `who` of fanin's own calls (its handlers, `fanin:<handler>`), not its clients' or pollers'. */
export const faninWho = (who: string): boolean => who.startsWith('fanin');

/** `value` rounded to `digits` decimals. */
export function round(value: number, digits = 2): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** A copy of `value` with every finite number rounded to 4 decimals. */
export function roundAll<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, typeof v === 'number' && Number.isFinite(v) ? round(v, 4) : v]),
  ) as T;
}

/** One metric per reply, grouped by `groupOf` and sorted by group. */
export function perReply(
  counters: Counters,
  metric: string,
  replies: number,
  groupOf: (who: string, detail: string) => string | undefined,
) {
  return Object.fromEntries(
    Object.entries(grouped(counters, metric, groupOf))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, value]) => [key, round(value / replies, 4)]),
  );
}

/** `writeUnits` → `write_units`, as a type. */
type SnakeCase<S extends string> = S extends `${infer C}${infer R}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<R>}`
  : S;

/** `T` with every field named in snake_case, as the results JSON names them. */
export type Snake<T> = T extends readonly (infer U)[]
  ? readonly Snake<U>[]
  : T extends object
    ? { readonly [K in keyof T as K extends string ? SnakeCase<K> : K]: Snake<T[K]> }
    : T;

/** A copy of `value` with every camelCase field name in snake_case, at any depth. */
export function snakeKeys<T>(value: T): Snake<T> {
  if (Array.isArray(value)) return value.map(snakeKeys) as Snake<T>;
  if (value === null || typeof value !== 'object') return value as Snake<T>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = /^[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+$/.test(key)
      ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
      : key;
    out[name] = snakeKeys(v);
  }
  return out as Snake<T>;
}
