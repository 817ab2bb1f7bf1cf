import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GLOBAL_OPTIONS } from '../../../../local/cli/io.ts';
import { ALL, OUTPUTS } from '../../../../local/cli/specs.ts';
import { OUTPUT_ROLES } from '../../../../shared/topology/topology.ts';

/**
 * The CLI's specs against its reference (docs/cli.md): every command of the reference's table has a
 * spec with examples, every option the reference names for it is declared, every declared option
 * is documented there, and the global options' table names the spec's globals. The integration
 * test of the help runs `fanin --help` as a process; this pins the specs themselves.
 */

const doc = readFileSync(new URL('../../../../docs/cli.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## The `fanin` CLI'));

/** The rows of the table whose header starts with `| <first> |`. */
function tableRows(first: string): string[][] {
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

/** Each documented command name with the option names its row gives (`reply --from` joins `reply`). */
function documented(): Map<string, Set<string>> {
  const commands = new Map<string, Set<string>>();
  for (const [name = '', what = '', options = ''] of tableRows('command')) {
    const names = [...name.matchAll(/`([a-z-]+)[^`]*`/g)].map((m) => m[1] as string);
    const flags = [...`${name} ${what} ${options}`.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1] as string);
    for (const command of names) {
      const set = commands.get(command) ?? new Set<string>();
      for (const flag of flags) set.add(flag);
      commands.set(command, set);
    }
  }
  return commands;
}

const specs = new Map(ALL.map((spec) => [spec.name, spec]));

describe('the CLI specs against docs/cli.md', () => {
  it('have one spec for every command of the reference, and no command it does not document', () => {
    expect([...documented().keys()].sort()).toEqual([...specs.keys()].sort());
  });

  it.each([...documented()])('declare every option the reference gives `%s`', (name, flags) => {
    const spec = specs.get(name);
    const declared = new Set([...Object.keys(spec?.options ?? {}), ...Object.keys(GLOBAL_OPTIONS)]);
    // A flag the row names for another command (`fanin tail completed` beside `--wait`...) is not its own.
    const own = [...flags].filter((flag) => !['stack', 'state', 'json', 'help', 'version'].includes(flag));
    const missing = own.filter((flag) => !declared.has(flag));
    expect(missing).toEqual([]);
  });

  it.each(ALL.map((spec) => [spec.name, spec] as const))(
    'document every option `%s` declares, and give it examples that call it',
    (name, spec) => {
      const flags = documented().get(name) ?? new Set();
      expect(Object.keys(spec.options).filter((option) => !flags.has(option))).toEqual([]);
      expect(spec.examples?.length).toBeGreaterThan(0);
      for (const example of spec.examples ?? []) expect(example).toContain(`fanin ${name}`);
    },
  );

  it('have the global options of the reference', () => {
    const globals = tableRows('global option').map(([option = '']) => /--([a-z-]+)/.exec(option)?.[1]);
    // --json is described in the text above the table: every command takes it.
    expect(section).toContain('Every command takes `--json`');
    expect([...globals, 'json'].sort()).toEqual(Object.keys(GLOBAL_OPTIONS).sort());
  });

  it("tail's outputs are the topology's output roles", () => {
    expect([...OUTPUTS].sort()).toEqual([...OUTPUT_ROLES].sort());
    expect(specs.get('tail')?.arguments?.[0]?.choices).toEqual(OUTPUTS);
  });

  it('give every option a description, and a placeholder to each that takes a value', () => {
    for (const spec of ALL) {
      expect(spec.summary.length).toBeGreaterThan(10);
      for (const [option, described] of Object.entries(spec.options)) {
        expect(described.description, `${spec.name} --${option}`).not.toBe('');
        if (described.type === 'string')
          expect(described.placeholder, `${spec.name} --${option}`).toBeDefined();
      }
    }
  });
});
