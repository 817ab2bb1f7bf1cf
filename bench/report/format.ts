/** Formatting shared by the report's sections: numbers, dollars and markdown tables. */

/** A figure with at most `digits` decimals and thousands separators; `—` when missing or not finite. */
export const fmt = (n: number | null | undefined, digits = 2): string =>
  n === null || n === undefined || !Number.isFinite(n)
    ? '—'
    : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });

/** Dollars with cents: `$1,234.50`. */
export const usd = (n: number): string =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

/** Milliseconds: `1,747 ms`; seconds from milliseconds: `35.2 s`. */
export const ms = (n: number): string => `${fmt(n, 0)} ms`;
export const secs = (n: number): string => `${fmt(n / 1000, 1)} s`;
/** Two figures in milliseconds, as a percentile pair: `259 / 465 ms`. */
export const msPair = (a: number, b: number): string => `${fmt(a, 0)} / ${ms(b)}`;

/** `text(value)` when there is a value, else nothing: the optional clauses of the report's prose. */
export const when = <T>(value: T | undefined | null | false, text: (v: T) => string): string =>
  value === undefined || value === null || value === false ? '' : text(value);

/** A figure by fan-out: `1.5 @10, 1.52 @100`. */
export const byFanOut = (values: Readonly<Record<string, number>>): string =>
  Object.entries(values)
    .map(([f, v]) => `${fmt(v, 2)} @${f}`)
    .join(', ');

/** Named figures in the order given: `fan-out 0.01, reply 0.983`; empty when there are none. */
export const listed = (values: Readonly<Record<string, number>>, digits = 3): string =>
  Object.entries(values)
    .map(([name, v]) => `${name} ${fmt(v, digits)}`)
    .join(', ');

/** One markdown table row: `| a | b |`, an empty cell as `| |`. */
export function tableRow(cells: readonly string[]): string {
  return `|${cells.map((cell) => (cell === '' ? ' ' : ` ${cell} `)).join('|')}|`;
}

/**
 * A markdown table: the header row, the separator, then one row per entry of `rows`.
 *
 * @example
 * table(['window', 'puts/s'], [['before', '812.4']]);
 * // ['| window | puts/s |', '|---|---|', '| before | 812.4 |']
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return [tableRow(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(tableRow)];
}

/** A markdown table of `rows`, one column per `[header, cell]` of `columns`. */
export function columns<T>(
  rows: readonly T[],
  cols: readonly (readonly [string, (row: T) => string])[],
): string[] {
  return table(
    cols.map(([header]) => header),
    rows.map((row) => cols.map(([, cell]) => cell(row))),
  );
}

/** A template of prose written over several source lines: each line break and its indentation is one space. */
export function prose(strings: TemplateStringsArray, ...values: readonly unknown[]): string {
  return strings.reduce(
    (out, text, i) => out + text.replace(/\n */g, ' ') + (i < values.length ? String(values[i]) : ''),
    '',
  );
}
