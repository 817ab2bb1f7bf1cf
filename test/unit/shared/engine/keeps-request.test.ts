import { describe, expect, it } from 'vitest';
import { keepsRequest } from '../../../../shared/engine/keeps-request.ts';
import { aDefinition } from './factories.ts';

/**
 * Whether an aggregate's request is stored (docs/data-plane.md): only when something reads it —
 * a `custom` aggregation, a recipient list or a labelled splitter naming missing replies, or a
 * completion predicate that reads `request`.
 */
describe('keeping the request', () => {
  it.each([
    ['a plain collect of a request without fan-out', aDefinition(), false],
    [
      'a custom aggregation, which reads the request',
      aDefinition({ aggregation: { algorithm: 'custom', expression: '$count(replies)' } }),
      true,
    ],
    [
      'a recipient list, which labels missing replies',
      aDefinition({ fanOut: { type: 'recipient-list' } }),
      true,
    ],
    [
      'a splitter with labels',
      aDefinition({ fanOut: { type: 'splitter', itemsPath: '$.items', target: 'w', labelPath: '$.sku' } }),
      true,
    ],
    [
      'a splitter without labels',
      aDefinition({ fanOut: { type: 'splitter', itemsPath: '$.items', target: 'w' } }),
      false,
    ],
    [
      'a predicate that reads the request',
      aDefinition({ completion: { strategy: 'predicate', expression: '$count(replies) >= request.n' } }),
      true,
    ],
    [
      'a predicate that does not',
      aDefinition({ completion: { strategy: 'predicate', expression: '$count(replies) >= 2' } }),
      false,
    ],
    [
      'an any whose predicate rule reads the request',
      aDefinition({
        completion: {
          strategy: 'any',
          rules: [
            { rule: 'count', count: 5 },
            { rule: 'predicate', expression: 'request.urgent' },
          ],
        },
      }),
      true,
    ],
  ])('%s: %s', (_, definition, kept) => {
    expect(keepsRequest(definition)).toBe(kept);
  });
});
