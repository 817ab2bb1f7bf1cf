/** The meter's counters and the queries over them. */

/** A snapshot of the counters. */
export type Counters = Readonly<Record<string, number>>;

/** Splits a counter key into its parts. */
export function parseKey(key: string): { metric: string; who: string; detail: string } {
  const [metric = '', who = '', ...rest] = key.split('|');
  return { metric, who, detail: rest.join('|') };
}

/** `after - before`, counter by counter (counters only grow). */
export function diff(after: Counters, before: Counters): Counters {
  const result: Record<string, number> = {};
  for (const [key, value] of Object.entries(after)) {
    const delta = value - (before[key] ?? 0);
    if (delta !== 0) result[key] = delta;
  }
  return result;
}

/** Sums the counters of one metric whose `who` and detail pass the filter. */
export function total(
  counters: Counters,
  metric: string,
  filter: (who: string, detail: string) => boolean = () => true,
): number {
  let sum = 0;
  for (const [key, value] of Object.entries(counters)) {
    const parsed = parseKey(key);
    if (parsed.metric === metric && filter(parsed.who, parsed.detail)) sum += value;
  }
  return sum;
}

/** The counters of one metric grouped by a function of `who` and detail. */
export function grouped(
  counters: Counters,
  metric: string,
  groupOf: (who: string, detail: string) => string | undefined,
): Record<string, number> {
  const groups: Record<string, number> = {};
  for (const [key, value] of Object.entries(counters)) {
    const parsed = parseKey(key);
    if (parsed.metric !== metric) continue;
    const group = groupOf(parsed.who, parsed.detail);
    if (group !== undefined) groups[group] = (groups[group] ?? 0) + value;
  }
  return groups;
}
