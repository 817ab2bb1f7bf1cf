import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DRAIN_BATCH_SIZE,
  TOPOLOGY_CHOICES,
  TOPOLOGY_DEFAULTS,
  type TopologyChoice,
  topologyOptionsOf,
} from '../../../../shared/topology/options.ts';
import { describeTopology } from '../../../../shared/topology/topology.ts';

const read = (path: string) => readFileSync(new URL(`../../../../${path}`, import.meta.url), 'utf8');
const CONFIGURATION = read('docs/configuration.md');
const SOURCE = read('shared/topology/options.ts');
const definitions = [{ name: 'd', completion: { strategy: 'all' as const } }];

/** The rows of every Markdown table of a document, each under the heading it follows. */
function tables(markdown: string): { heading: string; cells: string[] }[] {
  let heading = '';
  const rows: { heading: string; cells: string[] }[] = [];
  for (const line of markdown.split('\n')) {
    if (line.startsWith('#')) heading = line.replace(/^#+\s*/, '');
    else if (line.startsWith('|') && !/^\|[-|\s]+\|$/.test(line)) {
      rows.push({ heading, cells: line.split(' | ').map((cell) => cell.replace(/^\|\s*|\s*\|$/g, '')) });
    }
  }
  return rows;
}

/** The names a row's first cell gives in backticks. */
const namesOf = (cell: string) => [...cell.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1] as string);

/** The option a documented name stands for: the construct's `functionTimeout` is the topology's seconds. */
const choiceOf = (name: string) => (name === 'functionTimeout' ? 'functionTimeoutSeconds' : name);

/** How a default is written in the docs' table and in a `@default` tag. */
function written(value: unknown, thousands: boolean): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' && thousands) return value.toLocaleString('en-US');
  return String(value);
}

/** Each property's TSDoc in options.ts, by name: the comment right above `readonly <name>?`. */
function tsdoc(): Map<string, string> {
  const docs = new Map<string, string>();
  for (const m of SOURCE.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly (\w+)\??:/g)) {
    docs.set(m[2] as string, (m[1] as string).replace(/\n\s*\* ?/g, ' '));
  }
  return docs;
}

/** The sub-settings and values of the partitioning default. */
const partitioningDefaults = Object.entries(TOPOLOGY_DEFAULTS.partitioning);

describe('topology options, declared once', () => {
  const topologyRows = tables(CONFIGURATION).filter((row) => row.heading === 'Topology options');

  it('are each a row of the topology options table of docs/configuration.md, and no more', () => {
    const documented = topologyRows.slice(1).flatMap((row) => namesOf(row.cells[0] ?? '').map(choiceOf));
    expect([...new Set(documented)].sort()).toEqual([...TOPOLOGY_CHOICES].sort());
    expect(documented).toHaveLength(new Set(documented).size + 1); // functionTimeout and its seconds share a row
  });

  it('are documented nowhere else in docs/configuration.md: no other table has a row for one', () => {
    const elsewhere = tables(CONFIGURATION)
      .filter((row) => row.heading !== 'Topology options')
      .flatMap((row) => namesOf(row.cells[0] ?? '').map(choiceOf))
      .filter((name) => (TOPOLOGY_CHOICES as string[]).includes(name));
    expect(elsewhere).toEqual([]);
  });

  it.each(TOPOLOGY_CHOICES.filter((c) => c !== 'partitioning'))(
    "%s: the docs' table gives the default describeTopology applies",
    (choice) => {
      const row = topologyRows.find((r) =>
        namesOf(r.cells[0] ?? '')
          .map(choiceOf)
          .includes(choice),
      );
      const cell = row?.cells[1] ?? '';
      expect(cell.match(/`([^`]+)`/)?.[1]).toBe(written(TOPOLOGY_DEFAULTS[choice], false));
      if (choice === 'replyBatchSize') expect(cell).toContain(`\`${DEFAULT_DRAIN_BATCH_SIZE}\``);
    },
  );

  it("partitioning: the docs' table and the TSDoc give every setting's default", () => {
    const row = topologyRows.find((r) => namesOf(r.cells[0] ?? '').includes('partitioning'));
    const tag =
      tsdoc()
        .get('partitioning')
        ?.match(/@default - ([^\n]*)/)?.[1] ?? '';
    for (const [name, value] of partitioningDefaults) {
      expect(row?.cells[1]).toContain(`\`${name}\` ${written(value, true)}`);
      expect(tag).toContain(`${name} ${written(value, true)}`);
      expect(tsdoc().get(name)).toMatch(new RegExp(`@default ${value}\\b`));
    }
  });

  it.each(TOPOLOGY_CHOICES.filter((c) => c !== 'partitioning'))(
    '%s: its TSDoc, which the construct props inherit, gives the default',
    (choice) => {
      expect(tsdoc().get(choice)).toMatch(
        new RegExp(`@default ${written(TOPOLOGY_DEFAULTS[choice], false)}(\\s|$)`),
      );
    },
  );

  it('are what describeTopology applies when none is given', () => {
    const given = describeTopology({ ...TOPOLOGY_DEFAULTS, definitions });
    const defaulted = describeTopology({ definitions });
    expect(defaulted).toEqual(given);
    expect(defaulted.replyPartitions).toHaveLength(2);
    expect(defaulted.partitioning).toMatchObject({ highThreshold: 10_000, lowWatermark: 20 });
  });

  it('are copied from props or a configuration without the ones left undefined, and nothing else', () => {
    const options = topologyOptionsOf({
      prefix: 'shop',
      replyPartitions: undefined,
      replyBatchSize: [10, 100],
      partitioning: { highWatermark: 200 },
      claimCheckThreshold: 1024,
      definitions,
    } as Partial<Record<TopologyChoice | 'claimCheckThreshold' | 'definitions', unknown>>);
    expect(options).toStrictEqual({
      prefix: 'shop',
      replyBatchSize: [10, 100],
      partitioning: { highWatermark: 200 },
    });
  });
});
