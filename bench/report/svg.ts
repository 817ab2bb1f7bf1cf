import { fmt, prose } from './format.ts';
import type { Results } from './schema.ts';

/** The scale chart: write units per reply against fan-out, fanin and the naive baseline, log–log. */
export function renderScaleSvg(results: Results): string {
  const c = chartOf(results.scale);
  const parts: string[] = [
    prose`<svg xmlns="http://www.w3.org/2000/svg" width="${c.width}" height="${c.height}" viewBox="0 0 ${c.width}
      ${c.height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${c.width}" height="${c.height}" fill="white"/>`,
    prose`<text x="${c.margin.left}" y="22" font-size="15" font-weight="bold">DynamoDB write units per reply vs
      fan-out (log–log)</text>`,
    ...grid(c),
  ];
  const { margin, plotW, plotH, height } = c;
  const points = results.scale;
  parts.push(
    `<rect x="${margin.left}" y="${margin.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`,
    prose`<text x="${margin.left + plotW / 2}" y="${height - 18}" text-anchor="middle">replies per aggregate
      (fan-out)</text>`,
    prose`<text transform="translate(18 ${margin.top + plotH / 2}) rotate(-90)" text-anchor="middle">write units
      per reply</text>`,
  );
  for (const [i, s] of SERIES.entries()) parts.push(...seriesParts(c, points, s, i));
  parts.push(
    prose`<text x="${margin.left + plotW + 16}" y="${margin.top + plotH - 32}"
      fill="#555">${results.quick ? 'quick run' : 'full run'}, ${results.date.slice(0, 10)}</text>`,
    prose`<text x="${margin.left + plotW + 16}" y="${margin.top + plotH - 16}" fill="#555">small replies (~20 B
      body)</text>`,
    ...(points.some((p) => p.baseline.method !== 'replayed')
      ? [
          prose`<text x="${margin.left + plotW + 16}" y="${margin.top + plotH}" fill="#555">hollow: sampled, not
            replayed</text>`,
        ]
      : []),
    '</svg>',
  );
  return `${parts.join('\n')}\n`;
}

/** The plot's size and its two logarithmic axes, fitted to the scale curve. */
function chartOf(points: Results['scale']) {
  const width = 720;
  const height = 440;
  const margin = { left: 70, right: 190, top: 40, bottom: 60 };
  const plotW = width - margin.left - margin.right;
  const plotH = height - margin.top - margin.bottom;
  const xs = points.map((p) => p.fan_out);
  const ys = points.flatMap((p) => [
    p.fanin.write_units_per_reply,
    p.fanin.recording_write_units_per_reply,
    p.baseline.write_units_per_reply,
  ]);
  const xMin = Math.log10(Math.min(...xs, 10));
  const xMax = Math.log10(Math.max(...xs, 10_000));
  const yMin = Math.floor(Math.log10(Math.max(0.5, Math.min(...ys))));
  const yMax = Math.ceil(Math.log10(Math.max(...ys, 10)));
  const x = (v: number) => margin.left + ((Math.log10(v) - xMin) / (xMax - xMin || 1)) * plotW;
  const y = (v: number) => margin.top + plotH - ((Math.log10(v) - yMin) / (yMax - yMin || 1)) * plotH;
  return { width, height, margin, plotW, plotH, xs, xMin, xMax, yMin, yMax, x, y };
}

type Chart = ReturnType<typeof chartOf>;

/** The grid lines and the axes' ticks: decades of fan-out, 1-2-5 steps of write units. */
function grid(c: Chart): string[] {
  const { margin, plotW, plotH, xMin, xMax, yMin, yMax, x, y } = c;
  const parts: string[] = [];
  for (let e = Math.ceil(xMin); e <= Math.floor(xMax); e += 1) {
    const px = x(10 ** e);
    parts.push(
      `<line x1="${px}" y1="${margin.top}" x2="${px}" y2="${margin.top + plotH}" stroke="#ddd"/>`,
      `<text x="${px}" y="${margin.top + plotH + 18}" text-anchor="middle">${fmt(10 ** e, 0)}</text>`,
    );
  }
  for (let e = yMin; e <= yMax; e += 1) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > yMax) continue;
      const py = y(v);
      parts.push(
        prose`<line x1="${margin.left}" y1="${py}" x2="${margin.left + plotW}" y2="${py}"
          stroke="${m === 1 ? '#ccc' : '#eee'}"/>`,
      );
      if (m !== 5)
        parts.push(`<text x="${margin.left - 8}" y="${py + 4}" text-anchor="end">${fmt(v, 1)}</text>`);
    }
  }
  return parts;
}

type Point = Results['scale'][number];
/** The chart's lines: name, colour, dash, the value of a point, and whether a point is hollow (sampled). */
const SERIES: readonly (readonly [string, string, string, (p: Point) => number, (p: Point) => boolean])[] = [
  [
    'naive baseline (one item)',
    '#c0392b',
    '',
    (p) => p.baseline.write_units_per_reply,
    (p) => p.baseline.method !== 'replayed',
  ],
  ['fanin, all-in', '#1f6fb2', '', (p) => p.fanin.write_units_per_reply, () => false],
  ['fanin, recording only', '#1f6fb2', '5 4', (p) => p.fanin.recording_write_units_per_reply, () => false],
];

/** One series' line, its points with their labels, and its legend entry. */
function seriesParts(c: Chart, points: Results['scale'], line: (typeof SERIES)[number], i: number): string[] {
  const { margin, plotW, xs, x, y } = c;
  const [name, color, dash, value, hollow] = line;
  const parts: string[] = [];
  const path = points
    .map((p, j) => `${j === 0 ? 'M' : 'L'}${x(p.fan_out).toFixed(1)},${y(value(p)).toFixed(1)}`)
    .join(' ');
  parts.push(
    `<path d="${path}" fill="none" stroke="${color}" stroke-width="2.5" stroke-dasharray="${dash}"/>`,
  );
  for (const p of points) {
    const px = x(p.fan_out);
    const py = y(value(p));
    parts.push(
      prose`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="4" fill="${hollow(p) ? 'white' : color}"
        stroke="${color}" stroke-width="2"/>`,
      // Labels go right of a point, except at the right edge, where they would run into the legend.
      // The baseline's labels sit below its points, clear of fanin's lines above them.
      p.fan_out === Math.max(...xs)
        ? prose`<text x="${(px - 6).toFixed(1)}" y="${(py - 7).toFixed(1)}" fill="${color}"
          text-anchor="end">${fmt(value(p), 2)}</text>`
        : prose`<text x="${(px + 6).toFixed(1)}" y="${(i === 0 ? py + 16 : py - 7).toFixed(1)}"
          fill="${color}">${fmt(value(p), 2)}</text>`,
    );
  }
  const ly = margin.top + 20 + i * 22;
  const lx = margin.left + plotW + 16;
  parts.push(
    prose`<line x1="${lx}" y1="${ly}" x2="${lx + 26}" y2="${ly}" stroke="${color}" stroke-width="2.5"
      stroke-dasharray="${dash}"/>`,
    `<text x="${lx + 32}" y="${ly + 4}">${name}</text>`,
  );
  return parts;
}
