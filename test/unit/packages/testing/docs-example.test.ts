import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { simulate } from '../../../../packages/testing/src/index.ts';

/**
 * docs/definitions.md, "Testing a definition": its example runs as written (its imports
 * bound to the kit and vitest's expect), and every test it declares passes. A change to the kit's
 * API or to the engine that makes the page wrong fails here.
 */

const page = readFileSync(new URL('../../../../docs/definitions.md', import.meta.url), 'utf8');
const section = page.slice(page.indexOf('## Testing a definition'));
const block = /```ts\n([\s\S]*?)\n```/.exec(section)?.[1] ?? '';
const body = block.replace(/^import .*$/gm, '');

const declared: { name: string; fn: () => Promise<void> }[] = [];
const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (
  ...args: string[]
) => (...values: unknown[]) => Promise<void>;
await new AsyncFunction('simulate', 'expect', 'it', body)(
  simulate,
  expect,
  (name: string, fn: () => Promise<void>) => declared.push({ name, fn }),
);

describe('docs/definitions.md, "Testing a definition"', () => {
  it('has an example importing the kit, declaring three tests', () => {
    expect(block).toContain("import { simulate } from '@fanin/testing';");
    expect(declared.map((d) => d.name)).toHaveLength(3);
  });
  for (const { name, fn } of declared) it(`runs as written: ${name}`, fn);
});
