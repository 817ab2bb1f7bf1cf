import type { Definition, RuntimeParameters } from './definition.ts';

/** The parameters a request may set for its own aggregate, in its body's `parameters`. */
export const REQUEST_PARAMETERS = [
  'timeoutSeconds',
  'count',
  'threshold',
  'recipientTimeoutSeconds',
] as const;
type RequestParameter = (typeof REQUEST_PARAMETERS)[number];

/** What a request asks for its own aggregate: parameters to apply, or why they are refused. */
export type RequestOverrides = { readonly parameters: RuntimeParameters } | { readonly refusal: string };

/**
 * Reads a request's own parameters (Camel's `completionSizeExpression` and
 * `completionTimeoutExpression`, IBM's per-request timeout): each must be one the definition's
 * `requestParameters` allows, of the right type, and within its bounds. Anything else is refused
 * with the reason — the whole request goes to the error output, never half applied.
 *
 * @example
 * requestOverrides(definition, { timeoutSeconds: 120 }); // { parameters: { timeoutSeconds: 120 } }
 */
export function requestOverrides(definition: Definition, value: unknown): RequestOverrides {
  if (value === undefined) return { parameters: {} };
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { refusal: `parameters must be an object (received ${JSON.stringify(value)})` };
  const parameters: { -readonly [K in RequestParameter]?: number } = {};
  for (const [name, given] of Object.entries(value)) {
    if (!(REQUEST_PARAMETERS as readonly string[]).includes(name))
      return {
        refusal: `parameters.${name} is not a parameter a request can set (${REQUEST_PARAMETERS.join(', ')})`,
      };
    const bounds = definition.requestParameters?.[name as RequestParameter];
    if (bounds === undefined)
      return { refusal: `definition "${definition.name}" does not let a request set parameters.${name}` };
    const integer = name !== 'threshold';
    if (typeof given !== 'number' || !Number.isFinite(given) || (integer && !Number.isInteger(given)))
      return {
        refusal: `parameters.${name} must be ${integer ? 'an integer' : 'a number'} (received ${JSON.stringify(given)})`,
      };
    const outside = outsideBounds(`parameters.${name}`, given, bounds, definition.name);
    if (outside) return { refusal: outside };
    parameters[name as RequestParameter] = given;
  }
  return { parameters };
}

/** Why a request's `expected` count is outside the definition's bounds, if it is. */
export function expectedOutsideBounds(
  definition: Definition,
  expected: number | undefined,
): string | undefined {
  const bounds = definition.requestParameters?.expected;
  if (bounds === undefined) return undefined;
  if (expected === undefined)
    return `expected is required by definition "${definition.name}" (between ${bounds.min} and ${bounds.max})`;
  return outsideBounds('expected', expected, bounds, definition.name);
}

function outsideBounds(
  field: string,
  value: number,
  bounds: { readonly min: number; readonly max: number },
  definition: string,
): string | undefined {
  if (value >= bounds.min && value <= bounds.max) return undefined;
  return `${field} is ${value}, outside the bounds definition "${definition}" sets (${bounds.min} to ${bounds.max})`;
}
