/**
 * The kit's examples of a markdown page: each ```ts block that imports `@fanin/testing`, with the
 * ```ts blocks shown before it in its `##` section (the definitions it tests), as one TypeScript
 * source without its imports. docs-example.test.ts runs them; the packages' tooling test
 * typechecks them against the packed declarations.
 */
export interface KitExample {
  /** The `##` heading of its section. */
  readonly section: string;
  /** The line of the page its kit block starts on. */
  readonly line: number;
  /** The definitions before it and the block itself, their `import` lines removed. */
  readonly source: string;
}

const KIT_IMPORT = /^import .* from '@fanin\/testing';$/m;

export function kitExamples(page: string): KitExample[] {
  const examples: KitExample[] = [];
  let section = '';
  let before: string[] = [];
  const lines = page.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    if (line.startsWith('## ')) {
      section = line.slice(3).trim();
      before = [];
      continue;
    }
    if (line !== '```ts') continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end += 1;
    const code = lines.slice(i + 1, end).join('\n');
    if (KIT_IMPORT.test(code)) {
      const source = [...before, code].join('\n').replace(/^import .*$/gm, '');
      examples.push({ section, line: i + 1, source });
    } else {
      before.push(code);
    }
    i = end;
  }
  return examples;
}
