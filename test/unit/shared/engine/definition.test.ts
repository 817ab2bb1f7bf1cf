import { describe, expect, it } from 'vitest';
import {
  type DefinitionInput,
  effectiveParameters,
  parseDefinition,
  parseDefinitions,
  RuntimeParametersSchema,
  runtimeParameterIssues,
} from '../../../../shared/engine/definition.ts';
import { InvalidDefinitionError } from '../../../../shared/errors.ts';
import { aDefinition, anOverrideDefinition, thrownBy } from './factories.ts';

const DAY = 24 * 3600;

/** The InvalidDefinitionError `input` is rejected with. */
function rejectionOf(input: unknown): InvalidDefinitionError {
  const error = thrownBy(() => parseDefinition(input));
  expect(error).toBeInstanceOf(InvalidDefinitionError);
  return error as InvalidDefinitionError;
}

describe('parseDefinition: defaults', () => {
  it('applies every default to a minimal definition', () => {
    // Prepare
    const input = { name: 'orders', completion: { strategy: 'all' } };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition).toStrictEqual({
      name: 'orders',
      mode: 'initialized',
      correlation: { source: 'attribute', name: 'fanin-aggregate-id' },
      completion: { strategy: 'all' },
      aggregation: { algorithm: 'collect' },
      unknownTimeoutSeconds: 0,
      latePolicy: 'route',
      // The Aggregator pattern's closed-aggregate list must outlive every redelivery SQS can make: 14 days in
      // the queue, 14 in its DLQ, then a redrive (mutant killed: a 7-day default).
      tombstoneRetentionSeconds: 30 * DAY,
      maxOpenSeconds: 14 * DAY,
      writeShards: 1,
      outputs: { eventBridge: false },
      // Completing a whole definition by one event naming no aggregate is an opt-in.
      externalEventCompletesAll: false,
    });
  });

  it.each([
    ['no fan-out', {}],
    ['fan-out none', { fanOut: { type: 'none' } }],
  ])('refuses cancelOutstanding with %s: fanin sent no sub-request to cancel', (_, fanOut) => {
    expect(() =>
      parseDefinition({ name: 'asked', completion: { strategy: 'all' }, cancelOutstanding: true, ...fanOut }),
    ).toThrow(/cancelOutstanding: needs a 'splitter' or 'recipient-list' fan-out.*; received true/);
  });

  it.each([
    ['a splitter', { type: 'splitter', itemsPath: '$.items', target: 'pickers' }],
    ['a recipient list', { type: 'recipient-list' }],
  ])(
    'takes cancelOutstanding with %s, and leaves it out of a definition that does not set it',
    (_, fanOut) => {
      expect(
        parseDefinition({ name: 'asked', completion: { strategy: 'first' }, cancelOutstanding: true, fanOut })
          .cancelOutstanding,
      ).toBe(true);
      expect(
        parseDefinition({ name: 'asked', completion: { strategy: 'first' }, fanOut }),
      ).not.toHaveProperty('cancelOutstanding');
    },
  );

  it('refuses externalEventCompletesAll without an externalEventPattern', () => {
    expect(() =>
      parseDefinition({
        name: 'market',
        fanOut: { type: 'none' },
        completion: { strategy: 'external' },
        externalEventCompletesAll: true,
      }),
    ).toThrow(/externalEventCompletesAll.*needs an externalEventPattern/);
  });

  it.each([
    ['timeout', { strategy: 'timeout' }],
    [
      'override',
      { strategy: 'override', score: { source: 'path', path: '$.rate' }, threshold: 3, direction: 'below' },
    ],
  ])('%s: completeWhenAllArrived defaults to true', (_strategy, completion) => {
    // Prepare
    const input = { name: 'quotes', timeoutSeconds: 30, completion };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition.completion).toMatchObject({ completeWhenAllArrived: true });
  });

  it('outputs: eventBridge defaults to false when outputs is given empty', () => {
    // Prepare
    const input = { name: 'orders', completion: { strategy: 'all' }, outputs: {} };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition.outputs).toStrictEqual({ eventBridge: false });
  });

  it('condense: folds every function when none are named', () => {
    // Prepare
    const input = {
      name: 'bids',
      completion: { strategy: 'all' },
      aggregation: { algorithm: 'condense', field: '$.bid' },
    };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition.aggregation).toStrictEqual({
      algorithm: 'condense',
      field: '$.bid',
      functions: ['count', 'sum', 'avg', 'min', 'max'],
    });
  });

  it('keeps the values given over the defaults', () => {
    // Prepare
    const input = {
      name: 'orders',
      completion: { strategy: 'timeout', completeWhenAllArrived: false },
      timeoutSeconds: 90,
      unknownTimeoutSeconds: 15,
      latePolicy: 'discard',
      tombstoneRetentionSeconds: 40 * DAY,
      maxOpenSeconds: 3600,
      outputs: { eventBridge: true },
    };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition).toMatchObject({
      completion: { strategy: 'timeout', completeWhenAllArrived: false },
      timeoutSeconds: 90,
      unknownTimeoutSeconds: 15,
      latePolicy: 'discard',
      tombstoneRetentionSeconds: 40 * DAY,
      maxOpenSeconds: 3600,
      outputs: { eventBridge: true },
    });
  });

  it("accepts the seed's self-starting auction: correlated by a body path, complete at 3 bids", () => {
    // Prepare
    const input = {
      name: 'auction',
      mode: 'self-starting',
      correlation: { source: 'path', path: '$.auctionId' },
      completion: { strategy: 'count', count: 3 },
      aggregation: { algorithm: 'best', criteria: [{ path: 'price', order: 'min' }] },
    };

    // Act
    const definition = parseDefinition(input);

    // Assess
    expect(definition).toMatchObject({
      mode: 'self-starting',
      correlation: { source: 'path', path: '$.auctionId' },
      completion: { strategy: 'count', count: 3 },
    });
  });
});

describe('parseDefinition: invalid definitions', () => {
  const base = { name: 'orders', completion: { strategy: 'all' } };
  const selfStarting = {
    name: 'auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.auctionId' },
    completion: { strategy: 'first' },
  };

  it.each([
    ['a count of 0', { ...base, completion: { strategy: 'count', count: 0 } }, 'completion.count', '0'],
    [
      'a fractional count',
      { ...base, completion: { strategy: 'count', count: 2.5 } },
      'completion.count',
      '2.5',
    ],
    [
      'an unknown strategy',
      { ...base, completion: { strategy: 'majority' } },
      'completion.strategy',
      '"majority"',
    ],
    [
      'a bad correlation path',
      { ...base, correlation: { source: 'path', path: 'order..id' } },
      'correlation.path',
      '"order..id"',
    ],
    [
      'a bad criterion path',
      { ...base, aggregation: { algorithm: 'best', criteria: [{ path: 'rate[x]', order: 'min' }] } },
      'aggregation.criteria.0.path',
      '"rate[x]"',
    ],
    [
      'an unknown criterion order',
      { ...base, aggregation: { algorithm: 'best', criteria: [{ path: 'rate', order: 'lowest' }] } },
      'aggregation.criteria.0.order',
      '"lowest"',
    ],
    [
      'a missing timeoutSeconds for timeout',
      { ...base, completion: { strategy: 'timeout' } },
      'timeoutSeconds',
      'nothing',
    ],
    [
      'a missing timeoutSeconds for override',
      {
        ...base,
        completion: {
          strategy: 'override',
          score: { source: 'path', path: '$.rate' },
          threshold: 3,
          direction: 'below',
        },
      },
      'timeoutSeconds',
      'nothing',
    ],
    ['a timeoutSeconds of 0', { ...base, timeoutSeconds: 0 }, 'timeoutSeconds', '0'],
    [
      'an unknown override direction',
      {
        ...base,
        timeoutSeconds: 30,
        completion: {
          strategy: 'override',
          score: { source: 'path', path: '$.rate' },
          threshold: 3,
          direction: 'sideways',
        },
      },
      'completion.direction',
      '"sideways"',
    ],
    [
      "'all' in self-starting mode",
      { ...selfStarting, completion: { strategy: 'all' } },
      'completion.strategy',
      '"all"',
    ],
    [
      'self-starting without a correlation source',
      { name: 'auction', mode: 'self-starting', completion: { strategy: 'first' } },
      'correlation',
      '"fanin-aggregate-id"',
    ],
    [
      'a fan-out in self-starting mode',
      { ...selfStarting, fanOut: { type: 'splitter', itemsPath: '$.items', target: 'q' } },
      'fanOut',
      '"splitter"',
    ],
    ['an unknown top-level key', { ...base, retries: 3 }, '(definition)', '"retries"'],
    [
      'an unknown key inside a strategy',
      { ...base, completion: { strategy: 'all', count: 3 } },
      'completion',
      '"count"',
    ],
    ['an unknown key inside outputs', { ...base, outputs: { sns: true } }, 'outputs', '"sns"'],
    ['a name with a space', { ...base, name: 'my orders' }, 'name', '"my orders"'],
    ['an unknown late policy', { ...base, latePolicy: 'drop' }, 'latePolicy', '"drop"'],
    [
      // An expired tombstone would let a redelivered request or bid open its aggregate again
      // (mutant killed: the old 60-second minimum).
      'a tombstone retention shorter than SQS can still redeliver (28 days and a day)',
      { ...base, tombstoneRetentionSeconds: 29 * DAY - 1 },
      'tombstoneRetentionSeconds',
      String(29 * DAY - 1),
    ],
    ['an allowed life under a minute', { ...base, maxOpenSeconds: 59 }, 'maxOpenSeconds', '59'],
    [
      'a negative unknown-message timeout',
      { ...base, unknownTimeoutSeconds: -1 },
      'unknownTimeoutSeconds',
      '-1',
    ],
  ])('rejects %s, naming the field and the value received', (_case, input, field, received) => {
    // Prepare
    const fieldPrefix = `${field}: `;

    // Act
    const error = rejectionOf(input);

    // Assess
    const issue = error.issues.find((candidate) => candidate.startsWith(fieldPrefix));
    expect(issue, `no issue for ${field} in ${JSON.stringify(error.issues)}`).toBeDefined();
    expect(issue).toContain('received ');
    expect(issue?.slice(issue.indexOf('received '))).toContain(received);
    expect(error.message).toContain(issue);
  });

  it('reports every failing field at once', () => {
    // Prepare
    const input = { name: 'bad name', completion: { strategy: 'count', count: 0 } };

    // Act
    const error = rejectionOf(input);

    // Assess
    expect(error.issues).toHaveLength(2);
    expect(error.issues.some((issue) => issue.startsWith('name: '))).toBe(true);
    expect(error.issues.some((issue) => issue.startsWith('completion.count: '))).toBe(true);
  });

  it.each([
    ['null', null],
    ['a string', 'orders'],
    ['an empty object', {}],
  ])('rejects %s as a definition', (_case, input) => {
    // Prepare
    // (input from the table)

    // Act
    const error = rejectionOf(input);

    // Assess
    expect(error.issues.length).toBeGreaterThan(0);
    expect(error.message).toMatch(/^invalid aggregation definition: /);
  });
});

describe('parseDefinitions', () => {
  it('returns the definitions by name', () => {
    // Prepare
    const inputs = [
      { name: 'orders', completion: { strategy: 'all' } },
      { name: 'quotes', completion: { strategy: 'first' } },
    ];

    // Act
    const definitions = parseDefinitions(inputs);

    // Assess
    expect([...definitions.keys()]).toEqual(['orders', 'quotes']);
    expect(definitions.get('quotes')?.completion).toStrictEqual({ strategy: 'first' });
  });

  it('rejects a duplicate name, naming its index and the name', () => {
    // Prepare
    const inputs = [
      { name: 'orders', completion: { strategy: 'all' } },
      { name: 'quotes', completion: { strategy: 'first' } },
      { name: 'orders', completion: { strategy: 'first' } },
    ];

    // Act
    const error = thrownBy(() => parseDefinitions(inputs));

    // Assess
    expect(error).toBeInstanceOf(InvalidDefinitionError);
    expect((error as InvalidDefinitionError).issues).toEqual([
      '[2].name: duplicate definition name; received "orders"',
    ]);
  });

  it('rejects the list when one definition is invalid', () => {
    // Prepare
    const inputs = [
      { name: 'orders', completion: { strategy: 'all' } },
      { name: 'quotes', completion: { strategy: 'count', count: 0 } },
    ];

    // Act
    const error = thrownBy(() => parseDefinitions(inputs));

    // Assess
    expect(error).toBeInstanceOf(InvalidDefinitionError);
    expect((error as Error).message).toContain('completion.count');
  });
});

describe('effectiveParameters', () => {
  const count = aDefinition({ completion: { strategy: 'count', count: 3 }, timeoutSeconds: 120 });
  const override = anOverrideDefinition({ threshold: 5 });
  const all = aDefinition();

  it.each([
    ['count, no overrides', count, undefined, { timeoutSeconds: 120, count: 3 }],
    ['count, count overridden', count, { count: 5 }, { timeoutSeconds: 120, count: 5 }],
    ['count, timeout overridden', count, { timeoutSeconds: 10 }, { timeoutSeconds: 10, count: 3 }],
    ['override, no overrides', override, {}, { timeoutSeconds: 60, threshold: 5 }],
    [
      'override, threshold and timeout overridden',
      override,
      { threshold: 4.5, timeoutSeconds: 30 },
      { timeoutSeconds: 30, threshold: 4.5 },
    ],
    [
      'override, a threshold of 0 overrides',
      override,
      { threshold: 0 },
      { timeoutSeconds: 60, threshold: 0 },
    ],
    ['all without a timeout', all, undefined, {}],
    ['all, a runtime timeout', all, { timeoutSeconds: 15 }, { timeoutSeconds: 15 }],
    ['all, overrides of parameters it does not have are ignored', all, { count: 9, threshold: 1 }, {}],
  ])('%s', (_case, definition, overrides, expected) => {
    // Prepare
    // (definition and overrides from the table)

    // Act
    const params = effectiveParameters(definition, overrides);

    // Assess
    expect(params).toStrictEqual(expected);
  });

  it('does not change the definition', () => {
    // Prepare
    const definition = anOverrideDefinition({ threshold: 5 });
    const before = structuredClone(definition);

    // Act
    effectiveParameters(definition, { threshold: 1, timeoutSeconds: 5 });

    // Assess
    expect(definition).toStrictEqual(before);
  });
});

describe('recipient deadlines in the effective parameters', () => {
  const banks = aDefinition({
    name: 'banks',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    timeoutSeconds: 600,
    responders: { timeoutSeconds: 30 },
  });

  it("an override changes the responders' own recipient deadline", () => {
    expect(effectiveParameters(banks, { recipientTimeoutSeconds: 45 })).toStrictEqual({
      timeoutSeconds: 600,
      recipientTimeoutSeconds: 45,
    });
  });

  it('an override never gives a definition without responders a recipient deadline', () => {
    expect(effectiveParameters(aDefinition(), { recipientTimeoutSeconds: 45 })).toStrictEqual({});
  });

  it('an override never gives recipients without a timeout of their own one (only timeouts by recipient)', () => {
    const listed = aDefinition({
      name: 'banks',
      fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
      timeoutSeconds: 600,
      responders: { timeouts: { 'bank-b': 90 } },
    });

    expect(effectiveParameters(listed, { recipientTimeoutSeconds: 45 })).not.toHaveProperty(
      'recipientTimeoutSeconds',
    );
  });
});

describe('runtimeParameterIssues', () => {
  it('refuses a recipient deadline for a definition without responders, saying it has none', () => {
    expect(runtimeParameterIssues(aDefinition(), { recipientTimeoutSeconds: 30 })).toStrictEqual([
      'parameters.recipientTimeoutSeconds: "orders" has no responders, so no recipient deadline to set',
    ]);
  });

  it('refuses a recipient deadline where the responders have only timeouts by recipient', () => {
    const listed = aDefinition({
      name: 'banks',
      fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
      timeoutSeconds: 600,
      responders: { timeouts: { 'bank-b': 90 } },
    });

    expect(runtimeParameterIssues(listed, { recipientTimeoutSeconds: 30 })).toStrictEqual([
      'parameters.recipientTimeoutSeconds: the responders of "banks" have no timeoutSeconds to set (only timeouts by recipient)',
    ]);
  });

  it('takes a recipient deadline for a definition whose responders have one', () => {
    const banks = aDefinition({
      name: 'banks',
      fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
      timeoutSeconds: 600,
      responders: { timeoutSeconds: 30 },
    });

    expect(runtimeParameterIssues(banks, { recipientTimeoutSeconds: 45, timeoutSeconds: 900 })).toStrictEqual(
      [],
    );
  });

  it('lists every parameter the definition cannot use', () => {
    expect(runtimeParameterIssues(aDefinition(), { count: 2, recipientTimeoutSeconds: 30 })).toHaveLength(2);
  });
});

describe('RuntimeParametersSchema', () => {
  it('accepts the parameters a control command may change', () => {
    // Prepare
    const input = { timeoutSeconds: 30, threshold: 2.5, count: 4 };

    // Act
    const result = RuntimeParametersSchema.safeParse(input);

    // Assess
    expect(result.success).toBe(true);
  });

  it.each([
    ['an unknown parameter', { expected: 3 }],
    ['a count of 0', { count: 0 }],
    ['a fractional timeout', { timeoutSeconds: 1.5 }],
    ['a non-numeric threshold', { threshold: '3' }],
  ])('rejects %s', (_case, input) => {
    // Prepare
    // (input from the table)

    // Act
    const result = RuntimeParametersSchema.safeParse(input);

    // Assess
    expect(result.success).toBe(false);
  });
});

describe('parseDefinition: completion rules', () => {
  const rejection = (input: Partial<DefinitionInput>) => {
    const error = thrownBy(() => parseDefinition({ name: 'x', completion: { strategy: 'all' }, ...input }));
    expect(error).toBeInstanceOf(InvalidDefinitionError);
    return (error as Error).message;
  };

  it.each([
    [
      'a predicate that does not parse',
      { completion: { strategy: 'predicate', expression: '$count(replies' } },
      'completion.expression: is not a valid JSONata expression',
    ],
    [
      'an any rule twice',
      {
        completion: {
          strategy: 'any',
          rules: [
            { rule: 'count', count: 2 },
            { rule: 'count', count: 3 },
          ],
        },
      },
      "completion.rules.1.rule: rule 'count' appears twice",
    ],
    [
      'all-arrived without an expected count',
      {
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.k' },
        completion: { strategy: 'any', rules: [{ rule: 'all-arrived' }] },
      },
      "completion.rules.0.rule: 'all-arrived' needs an expected count",
    ],
    [
      'bounds whose min is above their max',
      { completion: { strategy: 'count', count: 2 }, requestParameters: { count: { min: 5, max: 2 } } },
      'requestParameters.count: min must be at most max',
    ],
    [
      'a count bound without a count',
      { requestParameters: { count: { min: 1, max: 2 } } },
      "requestParameters.count: completion strategy 'all' has no count for a request to set",
    ],
    [
      'a threshold bound without a threshold',
      { requestParameters: { threshold: { min: 1, max: 2 } } },
      'requestParameters.threshold: completion strategy',
    ],
    [
      'an expected bound on a splitter',
      {
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'q' },
        requestParameters: { expected: { min: 1, max: 2 } },
      },
      'requestParameters.expected: a splitter fan-out counts its own replies',
    ],
    [
      'a tolerated percentage above 100',
      { toleratedFailurePercentage: 101 },
      'toleratedFailurePercentage: Too big',
    ],
  ])('rejects %s, naming the field', (_case, input, message) => {
    expect(rejection(input as Partial<DefinitionInput>)).toContain(message);
  });

  it('accepts the any-of of every rule kind, failure tolerance and request bounds together', () => {
    expect(() =>
      parseDefinition({
        name: 'loan',
        fanOut: { type: 'none' },
        completion: {
          strategy: 'any',
          rules: [
            {
              rule: 'threshold',
              score: { source: 'path', path: '$.rate' },
              threshold: 3,
              direction: 'below',
            },
            { rule: 'count', count: 3 },
            { rule: 'predicate', expression: 'true' },
            { rule: 'all-arrived' },
          ],
        },
        toleratedFailureCount: 1,
        toleratedFailurePercentage: 25,
        requestParameters: {
          count: { min: 1, max: 5 },
          threshold: { min: 1, max: 5 },
          expected: { min: 1, max: 9 },
        },
      }),
    ).not.toThrow();
  });
});

describe('parseDefinition: responders.retry', () => {
  const banks = {
    name: 'banks',
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
    completion: { strategy: 'all' },
    timeoutSeconds: 300,
  };

  it("takes a request's recipient deadline up to the longest timeoutSeconds a request may have, not beyond", () => {
    const both = {
      ...banks,
      timeoutSeconds: 10,
      responders: { timeoutSeconds: 8 },
      requestParameters: {
        timeoutSeconds: { min: 5, max: 120 },
        recipientTimeoutSeconds: { min: 2, max: 110 },
      },
    };
    expect(() => parseDefinition(both)).not.toThrow();
    expect(() =>
      parseDefinition({
        ...both,
        requestParameters: { ...both.requestParameters, recipientTimeoutSeconds: { min: 2, max: 120 } },
      }),
    ).toThrow(
      /recipientTimeoutSeconds\.max: a request's recipient deadline \(up to 120 s\) must be shorter than the longest timeoutSeconds a request may have \(120 s\)/,
    );
  });

  it("takes a retry alone, its backoff rate Step Functions' default 2, fixed in the parameters an aggregate opens with", () => {
    const definition = parseDefinition({
      ...banks,
      responders: { retry: { attempts: 2, intervalSeconds: 30 } },
    });
    expect(effectiveParameters(definition).retry).toEqual({
      attempts: 2,
      intervalSeconds: 30,
      backoffRate: 2,
    });
  });

  it('takes failedReplies into the parameters only when it is on: a definition without it opens as before', () => {
    const on = parseDefinition({
      ...banks,
      responders: { retry: { attempts: 2, intervalSeconds: 30, failedReplies: true } },
    });
    const off = parseDefinition({
      ...banks,
      responders: { retry: { attempts: 2, intervalSeconds: 30, failedReplies: false } },
    });
    expect(effectiveParameters(on).retry).toEqual({
      attempts: 2,
      intervalSeconds: 30,
      backoffRate: 2,
      failedReplies: true,
    });
    expect(effectiveParameters(off).retry).toEqual({ attempts: 2, intervalSeconds: 30, backoffRate: 2 });
  });

  it.each([
    [
      'failedReplies that is not a boolean',
      { responders: { retry: { attempts: 1, intervalSeconds: 10, failedReplies: 'yes' } } },
      /responders\.retry\.failedReplies/,
    ],
    [
      'a fan-out none',
      { fanOut: { type: 'none' }, responders: { retry: { attempts: 1, intervalSeconds: 10 } } },
      /responders: needs a 'splitter' or 'recipient-list' fan-out/,
    ],
    [
      'a first retry at or after the longest recipient deadline',
      { responders: { timeoutSeconds: 30, retry: { attempts: 1, intervalSeconds: 30 } } },
      /responders\.retry\.intervalSeconds: the first retry \(30 s after the open\) must come before the longest recipient deadline \(30 s\)/,
    ],
    [
      "a first retry at or after the aggregate's deadline",
      { responders: { retry: { attempts: 1, intervalSeconds: 300 } } },
      /the first retry \(300 s after the open\) must come before the aggregate's deadline \(300 s\)/,
    ],
    [
      'more than 10 attempts',
      { responders: { retry: { attempts: 11, intervalSeconds: 10 } } },
      /responders\.retry\.attempts/,
    ],
    [
      'a backoff rate below 1',
      { responders: { retry: { attempts: 1, intervalSeconds: 10, backoffRate: 0.5 } } },
      /responders\.retry\.backoffRate/,
    ],
    [
      'heartbeats without a recipient deadline to extend',
      { responders: { heartbeatSeconds: 10, retry: { attempts: 1, intervalSeconds: 10 } } },
      /responders\.heartbeatSeconds: needs timeoutSeconds or timeouts/,
    ],
  ])('refuses %s, saying why', (_, over, reason) => {
    expect(() => parseDefinition({ ...banks, ...over })).toThrow(reason);
  });
});
