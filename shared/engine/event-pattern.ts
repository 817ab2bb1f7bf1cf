/**
 * Matches an event against an EventBridge event pattern, for the subset fanin's definitions use:
 * nested objects, arrays of allowed values, and the `prefix`, `anything-but`, `exists` and
 * `numeric` (=, <, <=, >, >=) operators. EventBridge itself does the matching in AWS; fanin
 * matches again in the control handler to learn which definition an event was meant for.
 */
export function matchesPattern(pattern: Readonly<Record<string, unknown>>, event: unknown): boolean {
  if (event === null || typeof event !== 'object') return false;
  const record = event as Record<string, unknown>;
  return Object.entries(pattern).every(([key, rule]) => {
    const value = record[key];
    if (Array.isArray(rule)) return rule.some((allowed) => matchesValue(allowed, value));
    if (rule !== null && typeof rule === 'object')
      return matchesPattern(rule as Record<string, unknown>, value);
    return false;
  });
}

function matchesValue(allowed: unknown, value: unknown): boolean {
  const values = Array.isArray(value) ? value : [value];
  if (allowed === null || typeof allowed !== 'object') return values.some((v) => v === allowed);
  const op = allowed as Record<string, unknown>;
  if ('exists' in op) return op.exists === (value !== undefined);
  if (typeof op.prefix === 'string') {
    const prefix = op.prefix;
    return values.some((v) => typeof v === 'string' && v.startsWith(prefix));
  }
  if ('anything-but' in op) {
    const excluded = Array.isArray(op['anything-but']) ? op['anything-but'] : [op['anything-but']];
    return value !== undefined && values.every((v) => !excluded.includes(v));
  }
  if (Array.isArray(op.numeric))
    return values.some((v) => typeof v === 'number' && numeric(op.numeric as unknown[], v));
  return false;
}

function numeric(conditions: readonly unknown[], value: number): boolean {
  for (let i = 0; i + 1 < conditions.length; i += 2) {
    const operator = conditions[i];
    const operand = conditions[i + 1];
    if (typeof operand !== 'number') return false;
    const ok =
      operator === '='
        ? value === operand
        : operator === '<'
          ? value < operand
          : operator === '<='
            ? value <= operand
            : operator === '>'
              ? value > operand
              : operator === '>='
                ? value >= operand
                : false;
    if (!ok) return false;
  }
  return true;
}
