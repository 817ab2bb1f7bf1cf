/**
 * Reads a value from a JSON document by a simple path: `$.quote.rate`, `items[2].sku`, `a.b.0`.
 * A path is the cheap, dependency-free form of correlation; JSONata covers everything else.
 */
export function readPath(document: unknown, path: string): unknown {
  const segments = parsePath(path);
  let current: unknown = document;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

const SEGMENT = /[^.[\]]+/g;

/** Splits a path into property names; `$` at the start means the document root. */
export function parsePath(path: string): string[] {
  const trimmed = path.trim().replace(/^\$\.?/, '');
  return trimmed.match(SEGMENT) ?? [];
}

/** True when `path` is well formed: `$`, or names separated by dots, with optional `[n]` indexes. */
export function isValidPath(path: string): boolean {
  return (
    /^(\$\.)?[A-Za-z_][\w-]*(\[\d+\]|\.[A-Za-z_][\w-]*|\.\d+)*$/.test(path.trim()) || path.trim() === '$'
  );
}
