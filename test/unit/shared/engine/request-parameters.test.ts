import { describe, expect, it } from 'vitest';
import { expectedOutsideBounds, requestOverrides } from '../../../../shared/engine/request-parameters.ts';
import { aDefinition } from './factories.ts';

describe('request parameters', () => {
  const sized = aDefinition({
    completion: { strategy: 'count', count: 3 },
    requestParameters: { count: { min: 1, max: 5 }, timeoutSeconds: { min: 10, max: 120 } },
  });

  it('within the bounds are taken as they are', () => {
    expect(requestOverrides(sized, { count: 5, timeoutSeconds: 10 })).toStrictEqual({
      parameters: { count: 5, timeoutSeconds: 10 },
    });
    expect(requestOverrides(sized, undefined)).toStrictEqual({ parameters: {} });
  });

  it.each([
    [{ count: 6 }, 'parameters.count is 6, outside the bounds definition "orders" sets (1 to 5)'],
    [{ count: 0 }, 'parameters.count is 0, outside the bounds'],
    [{ threshold: 1 }, 'definition "orders" does not let a request set parameters.threshold'],
    [{ expected: 3 }, 'parameters.expected is not a parameter a request can set'],
    [{ count: '3' }, 'parameters.count must be an integer (received "3")'],
    [[1], 'parameters must be an object'],
  ])('%j is refused: %s', (parameters, reason) => {
    expect(requestOverrides(sized, parameters)).toStrictEqual({ refusal: expect.stringContaining(reason) });
  });

  it('an expected count is checked against its bounds when the definition sets them', () => {
    // Prepare
    const bounded = aDefinition({
      fanOut: { type: 'none' },
      requestParameters: { expected: { min: 1, max: 10 } },
    });

    // Act & Assess
    expect(expectedOutsideBounds(bounded, 10)).toBeUndefined();
    expect(expectedOutsideBounds(bounded, 11)).toContain('expected is 11, outside the bounds');
    expect(expectedOutsideBounds(bounded, undefined)).toContain('expected is required');
    expect(expectedOutsideBounds(sized, 10_000)).toBeUndefined();
  });
});
