import type { DefinitionInput } from '../shared/engine/definition.ts';
import { type Action, replyBody } from './actions.ts';
import type { Random } from './random.ts';
import { drawScenarios, noScenarios, type Scenarios } from './scenarios.ts';

/**
 * What producers, responders and operators do in one run, drawn from everything the wire
 * contract allows (docs/wire-contract.md, docs/definitions.md): several definitions of every
 * strategy, requests and self-starting replies, ids with `#` and at their length limits,
 * duplicates with different bodies, retried requests naming other definitions, failed replies,
 * large fan-outs (rare, to keep runs fast), parameters at their bounds, control commands and
 * external events racing completion, claim-checked payloads, late and unknown replies.
 */

const YEAR = 365 * 24 * 3600;
/** The definitions' responder queues (targets and recipients), created by the world. */
export const TARGETS = ['sim-bank-a', 'sim-bank-b', 'sim-bank-c'] as const;
/** The external events' source and detail type. */
export const EVENT_SOURCE = 'sim.events';

/** How the responders answer sub-requests. */
export interface ResponderPolicy {
  readonly duplicate: number;
  readonly differentBody: number;
  readonly failure: number;
  readonly silent: number;
  readonly late: number;
  /** A looked-after sub-request's attempt lost (a retry may reach the responder again). */
  readonly lost: number;
  /** A looked-after responder thinking up to twice its own deadline, heartbeating if it may. */
  readonly slow: number;
}

/** One run's workload. */
export interface Workload {
  readonly definitions: DefinitionInput[];
  readonly actions: Action[];
  readonly responders: ResponderPolicy;
  readonly eventBridge: boolean;
  readonly bucket: boolean;
  readonly replyPartitions: number;
  readonly drained: boolean;
  /** The rare targeted scenarios drawn beside it (sim/scenarios.ts). */
  readonly scenarios: Scenarios;
}

function timeout(random: Random): number {
  return random.pick([5, 20, 60, 300, 900]);
}

/**
 * A definition's `responders` (docs/definitions.md, "Looking after the responders"), drawn
 * within what the definition checks allow: an own deadline of a fifth to a half of the
 * aggregate's (one value, or per bank of a recipient list), heartbeats, retries whose first
 * round comes before the longest own deadline, and sometimes a request's own deadline bounds.
 */
function lookAfter(
  random: Random,
  timeoutSeconds: number,
  recipients: readonly string[] | undefined,
): Pick<DefinitionInput, 'responders' | 'requestParameters'> {
  const own = Math.max(2, Math.round(timeoutSeconds * random.pick([0.2, 0.5])));
  const byBank = recipients !== undefined && random.chance(0.3);
  const timeouts = byBank
    ? Object.fromEntries(recipients.map((r) => [r, random.between(2, own)]))
    : undefined;
  const longest = timeouts ? Math.max(...Object.values(timeouts)) : own;
  const heartbeatSeconds = random.chance(0.5) ? Math.max(1, Math.round(own / 2)) : undefined;
  const retry = random.chance(0.8)
    ? {
        attempts: random.between(1, 3),
        intervalSeconds: Math.max(1, Math.floor(longest / random.pick([2, 3, 4]))),
        ...(random.chance(0.5) ? { backoffRate: random.pick([1, 1.5, 2]) } : {}),
        ...(random.chance(0.5) ? { failedReplies: true } : {}),
      }
    : undefined;
  const bounds = !byBank && random.chance(0.4);
  return {
    responders: {
      ...(timeouts ? { timeouts } : { timeoutSeconds: own }),
      ...(heartbeatSeconds !== undefined ? { heartbeatSeconds } : {}),
      ...(retry ? { retry } : {}),
    },
    ...(bounds
      ? { requestParameters: { recipientTimeoutSeconds: { min: 1, max: timeoutSeconds - 1 } } }
      : {}),
  };
}

/** The catalogue: each entry makes one definition (its name is fixed, its settings drawn). */
const CATALOGUE: Record<string, (random: Random, bus: boolean) => DefinitionInput> = {
  split: (random, bus) => {
    const timeoutSeconds = timeout(random);
    return {
      name: 'split',
      fanOut: { type: 'splitter', itemsPath: '$.items', target: TARGETS[0] },
      completion: { strategy: 'all' },
      timeoutSeconds,
      ...(random.chance(0.5) ? { toleratedFailureCount: random.between(0, 2) } : {}),
      writeShards: random.pick([1, 1, 2, 4]),
      outputs: { eventBridge: bus && random.chance(0.5) },
      ...(random.chance(0.3) ? lookAfter(random, timeoutSeconds, undefined) : {}),
    };
  },
  // The loan broker that looks after its banks: deadlines of their own, heartbeats, retries.
  banks: (random, bus) => {
    const timeoutSeconds = random.pick([20, 60, 300]);
    return {
      name: 'banks',
      fanOut: { type: 'recipient-list', recipients: [...TARGETS] },
      completion: random.chance(0.5) ? { strategy: 'all' } : { strategy: 'count', count: 2 },
      timeoutSeconds,
      ...(random.chance(0.3) ? { toleratedFailureCount: 1 } : {}),
      writeShards: random.pick([1, 2]),
      outputs: { eventBridge: bus && random.chance(0.5) },
      ...(random.chance(0.5) ? { cancelOutstanding: true } : {}),
      ...lookAfter(random, timeoutSeconds, TARGETS),
    };
  },
  list: (random, bus) => {
    // A count of 2 of the 3 banks ends early: the third is sent a cancellation notice.
    const byCount = random.chance(0.5);
    return {
      name: 'list',
      fanOut: { type: 'recipient-list', recipients: [...TARGETS] },
      completion: byCount ? { strategy: 'count', count: 2 } : { strategy: 'all' },
      timeoutSeconds: timeout(random),
      ...(random.chance(0.3) ? { toleratedFailurePercentage: 34 } : {}),
      outputs: { eventBridge: bus && random.chance(0.5) },
      ...(byCount ? { cancelOutstanding: true } : {}),
    };
  },
  first: () => ({
    name: 'first',
    fanOut: { type: 'none' },
    completion: { strategy: 'first' },
    timeoutSeconds: 60,
  }),
  any: (random) => ({
    name: 'any',
    fanOut: { type: 'none' },
    completion: {
      strategy: 'any',
      rules: [
        { rule: 'threshold', score: { source: 'path', path: '$.score' }, threshold: 90, direction: 'above' },
        { rule: 'count', count: random.between(2, 4) },
      ],
    },
    timeoutSeconds: timeout(random),
  }),
  predicate: (random) => ({
    name: 'predicate',
    fanOut: { type: 'none' },
    completion: { strategy: 'predicate', expression: '$count(replies) >= 3' },
    timeoutSeconds: timeout(random),
    ...(random.chance(0.5) ? { inactivityTimeoutSeconds: 4 } : {}),
  }),
  override: (random) => ({
    name: 'override',
    fanOut: { type: 'recipient-list', recipients: [...TARGETS] },
    completion: {
      strategy: 'override',
      score: { source: 'path', path: '$.rate' },
      threshold: 2.5,
      direction: 'below',
    },
    aggregation: { algorithm: 'best', criteria: [{ path: '$.rate', order: 'min' }] },
    timeoutSeconds: timeout(random),
    // The loan broker's early stop: the banks still working are told to stop.
    cancelOutstanding: true,
  }),
  external: (random, bus) => ({
    name: 'external',
    fanOut: { type: 'none' },
    completion: { strategy: 'external' },
    timeoutSeconds: timeout(random),
    externalEventPattern: { source: [EVENT_SOURCE], 'detail-type': ['Done'] },
    outputs: { eventBridge: bus },
  }),
  auction: (random, bus) => ({
    name: 'auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.lot' },
    replyId: { source: 'path', path: '$.bid' },
    completion: { strategy: 'timeout' },
    timeoutSeconds: random.pick([3, 10, 30]),
    writeShards: random.pick([1, 2, 3]),
    outputs: { eventBridge: bus && random.chance(0.5) },
  }),
  params: (random) => ({
    name: 'params',
    fanOut: { type: 'none' },
    completion: { strategy: 'count', count: 3 },
    timeoutSeconds: 30,
    maxOpenSeconds: YEAR,
    requestParameters: { timeoutSeconds: { min: 1, max: YEAR }, count: { min: 1, max: 5 } },
    ...(random.chance(0.5) ? { latePolicy: 'route' as const } : {}),
  }),
  custom: (random, bus) => ({
    name: 'custom',
    fanOut: { type: 'none' },
    completion: { strategy: 'count', count: 2 },
    aggregation: {
      algorithm: 'custom',
      // Reads the stored request, and sometimes the clock: every copy must still be one result.
      expression: random.chance(0.5)
        ? '{ "n": $count(replies), "tag": request.body.tag, "at": $millis() }'
        : '{ "n": $count(replies), "tag": request.body.tag }',
    },
    timeoutSeconds: timeout(random),
    outputs: { eventBridge: bus },
  }),
};

/**
 * Draws one run's workload. `big` allows the rare huge aggregates; `scenarios`, a stream of its
 * own, draws the rare targeted scenarios (none drawn: the workload is exactly as without it).
 */
export function drawWorkload(
  random: Random,
  options: { readonly big?: boolean; readonly scenarios?: Random } = {},
): Workload {
  const eventBridge = random.chance(0.6);
  const bucket = random.chance(0.5);
  const names = random.shuffle(Object.keys(CATALOGUE)).slice(0, random.between(3, 7));
  const definitions = names.map((name) =>
    (CATALOGUE[name] as (r: Random, b: boolean) => DefinitionInput)(random, eventBridge),
  );
  const replyPartitions = random.pick([1, 2, 3]);
  const actions: Action[] = [];
  const span = random.pick([2_000, 10_000, 40_000]);
  const aggregates = random.between(1, 6);
  let counter = 0;
  const id = (definition: string) => {
    counter += 1;
    const style = random.int(10);
    if (style === 0) return `${definition}#${counter}#x`.slice(0, 200);
    if (style === 1) return `a${counter}-`.padEnd(200, 'z');
    return `${definition}-${counter}`;
  };
  for (let n = 0; n < aggregates; n += 1) {
    const name = random.pick(names);
    const at = random.int(span);
    makeAggregate(random, {
      name,
      at,
      id: id(name),
      actions,
      replyPartitions,
      bucket,
      big: options.big ?? false,
      definition: definitions.find((d) => d.name === name),
    });
  }
  // Operators and external systems, racing whatever is open.
  const controls = random.chance(0.4) ? random.between(1, 3) : 0;
  for (let n = 0; n < controls; n += 1) {
    const at = random.int(span * 2);
    const target = actions.find((a) => a.aggregateId !== undefined && random.chance(0.5))?.aggregateId;
    const command = random.pick(['complete', 'purge', 'complete-all', 'set-parameters', 'list', 'event']);
    if (command === 'event') {
      const event = {
        version: '0',
        id: `ev-${n}`,
        source: EVENT_SOURCE,
        'detail-type': 'Done',
        detail: target !== undefined && random.chance(0.8) ? { aggregateId: target } : {},
      };
      actions.push({ at, queue: 'control', body: JSON.stringify(event), attributes: {}, kind: 'event' });
      continue;
    }
    const body =
      command === 'complete-all'
        ? { command: 'complete', definition: random.pick(names) }
        : command === 'set-parameters'
          ? {
              command: 'set-parameters',
              definition: 'params',
              parameters: { timeoutSeconds: random.pick([60, 86_400, YEAR]) },
            }
          : command === 'list'
            ? { command: 'list', definition: random.pick(names) }
            : target !== undefined
              ? { command, aggregateId: target }
              : { command, definition: random.pick(names) };
    actions.push({ at, queue: 'control', body: JSON.stringify(body), attributes: {}, kind: 'control' });
  }
  const scenarios = options.scenarios
    ? drawScenarios(options.scenarios, { present: names, bus: eventBridge, replyPartitions })
    : noScenarios();
  definitions.push(...scenarios.definitions);
  actions.push(...scenarios.actions);
  actions.sort((a, b) => a.at - b.at);
  const responders = {
    duplicate: random.pick([0, 0.05, 0.2]),
    differentBody: random.pick([0, 0.05]),
    failure: random.pick([0, 0.05, 0.2]),
    silent: random.pick([0, 0.02, 0.1]),
    late: random.pick([0, 0.05]),
    lost: random.pick([0.1, 0.3, 0.5]),
    slow: random.pick([0.1, 0.3]),
  };
  return {
    definitions,
    actions,
    responders,
    eventBridge,
    bucket: bucket || scenarios.bucket,
    replyPartitions,
    drained: random.chance(0.2),
    scenarios,
  };
}

/** The messages that open and feed one aggregate of definition `name`. */
function makeAggregate(
  random: Random,
  options: {
    name: string;
    at: number;
    id: string;
    actions: Action[];
    replyPartitions: number;
    bucket: boolean;
    big: boolean;
    definition: DefinitionInput | undefined;
  },
): void {
  const { name, at, id, actions } = options;
  const partition = () => random.int(options.replyPartitions);
  const reply = (aggregateId: string, replyId: string, when: number, definition = name) => {
    const attributes: Record<string, string> = {
      'fanin-definition': definition,
      'fanin-aggregate-id': aggregateId,
      'fanin-reply-id': replyId,
    };
    if (random.chance(0.05)) attributes['fanin-failure'] = 'responder failed';
    const body = JSON.stringify(replyBody(random, aggregateId, replyId));
    actions.push({ at: when, queue: partition(), body, attributes, aggregateId, replyId, kind: 'reply' });
    if (random.chance(0.05)) {
      const other = JSON.stringify(replyBody(random, aggregateId, replyId));
      actions.push({
        at: when + random.int(3000),
        queue: partition(),
        body: other,
        attributes,
        aggregateId,
        replyId,
        kind: 'reply',
      });
    }
  };
  if (name === 'auction') {
    // Self-starting lots; a key ending in `#<n>` beside the key it extends (write shards).
    const key = random.chance(0.1) ? `lot${random.int(100)}`.padEnd(256, 'k') : `lot${random.int(100)}`;
    const keys = random.chance(0.3) ? [key, `${key.slice(0, 250)}#1`, `${key.slice(0, 250)}#2`] : [key];
    for (const lot of keys) {
      const bids = random.between(1, 5);
      for (let b = 0; b < bids; b += 1) {
        const bid = `b${b}`;
        const aggregateId = `auction:${lot}`;
        const body = JSON.stringify({ lot, bid, ...replyBody(random, aggregateId, bid) });
        actions.push({
          at: at + random.int(5000),
          queue: partition(),
          body,
          attributes: { 'fanin-definition': 'auction' },
          aggregateId,
          replyId: bid,
          kind: 'reply',
        });
      }
    }
    return;
  }
  const requestId = `r-${id}`;
  const request: Record<string, unknown> = { definition: name, requestId, aggregateId: id };
  let expected = 0;
  if (name === 'split') {
    const huge = options.big && random.chance(0.1);
    expected = huge ? random.between(129, 160) : random.between(1, 5);
    request.items = Array.from({ length: expected }, (_, i) => ({ sku: `s${i}` }));
  } else if (name === 'list' || name === 'override' || name === 'banks') {
    expected = 3;
    request.payload = { amount: random.between(1, 9) };
  } else {
    const huge = name === 'first' && options.big && random.chance(0.05);
    expected = huge ? 300 : random.between(1, 4);
    request.expected = expected;
  }
  if (options.definition?.requestParameters?.recipientTimeoutSeconds !== undefined && random.chance(0.5)) {
    // The request's own deadline for its recipients, at and between the bounds.
    const max = options.definition.requestParameters.recipientTimeoutSeconds.max;
    request.parameters = { recipientTimeoutSeconds: random.pick([1, Math.ceil(max / 3), max]) };
  }
  if (name === 'params') {
    request.parameters = random.chance(0.5)
      ? { timeoutSeconds: random.pick([1, 3600, 30 * 86_400, YEAR]) }
      : { count: random.between(1, 5) };
  }
  request.tag = requestId;
  const claimCheck = options.bucket && random.chance(0.15);
  if (claimCheck && random.chance(0.3)) request.padding = 'p'.repeat(360_000);
  actions.push({
    at,
    queue: 'ingress',
    body: JSON.stringify(request),
    attributes: {},
    claimCheck,
    aggregateId: id,
    kind: 'request',
  });
  // A producer retrying: the same request, or the same ids naming another definition, or the id reused.
  if (random.chance(0.15)) {
    actions.push({
      at: at + random.int(4000),
      queue: 'ingress',
      body: JSON.stringify(request),
      attributes: {},
      claimCheck,
      aggregateId: id,
      kind: 'request',
    });
  }
  if (random.chance(0.1)) {
    const other = {
      ...request,
      definition: random.pick(['first', 'split', 'list', 'params']),
      items: [{ sku: 'x' }],
    };
    actions.push({
      at: at + random.int(4000),
      queue: 'ingress',
      body: JSON.stringify(other),
      attributes: {},
      claimCheck,
      aggregateId: id,
      kind: 'request',
    });
  }
  if (random.chance(0.08)) {
    const thief: Record<string, unknown> = {
      ...request,
      requestId: `${requestId}-other`,
      tag: `${requestId}-other`,
    };
    const big = options.bucket && random.chance(0.5);
    if (big) thief.padding = 'q'.repeat(360_000);
    actions.push({
      at: at + random.int(4000),
      queue: 'ingress',
      body: JSON.stringify(thief),
      attributes: {},
      claimCheck: big,
      aggregateId: id,
      kind: 'request',
    });
  }
  // Fan-out `none`: the requester sends the replies itself, some before its request is read.
  if (request.expected !== undefined) {
    const longIds = expected >= 300 && random.chance(0.5);
    for (let r = 0; r < expected; r += 1) {
      const replyId = longIds ? `${r}-`.padEnd(250, 'r') : String(r);
      if (random.chance(0.05)) continue;
      reply(id, replyId, at + random.int(longIds ? 2000 : 6000));
    }
    if (random.chance(0.05)) reply(`${id}-nobody`, '0', at + random.int(6000));
  }
}
