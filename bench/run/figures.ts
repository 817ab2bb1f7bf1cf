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
