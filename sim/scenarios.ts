import type { DefinitionInput } from '../shared/engine/definition.ts';
import { type Action, replyBody } from './actions.ts';
import type { Random } from './random.ts';

/**
 * Rare, targeted scenarios beside the drawn workload (sim/workload.ts): each builds the exact
 * shape one class of bug needs to show, shapes that the workload's independent draws reach too
 * seldom (a big fan-out with one tolerated failure, an aggregate id stolen by a large request,
 * a member set above DynamoDB's item limit, a deadline longer than an item's default life).
 *
 * They are drawn from a stream of their own (`random` here is not the workload's), and a seed that
 * draws none of them runs exactly as it did before they existed: its definitions, actions and
 * world are the workload's alone.
 */

/** The responder queue of the paced bulk responder (scenario `bulk`). */
export const BULK_TARGET = 'sim-bulk';

const DAY = 86_400;

/** What the scenarios add to a run's workload. */
export interface Scenarios {
  /** The names drawn, for the report and for replays. */
  readonly names: string[];
  readonly definitions: DefinitionInput[];
  readonly actions: Action[];
  /** Responder queues the world must create beside the workload's. */
  readonly targets: string[];
  /** Replies the paced bulk responder answers as failures (`<aggregate id>\0<reply id>`). */
  readonly bulkFailures: Set<string>;
  /** Milliseconds the paced bulk responder waits beyond its pace before these replies (same keys). */
  readonly bulkDelays: Map<string, number>;
  /** The scenario needs the payload bucket (claim-checked requests). */
  bucket: boolean;
}

/** How likely each scenario is in one seed (kept rare: a few of them are heavy). */
export const SCENARIO_RATES = {
  bulk: 0.06,
  stolen: 0.04,
  members: 0.012,
  long: 0.04,
  trigger: 0.05,
} as const;

/** No scenario at all. */
export function noScenarios(): Scenarios & { bucket: boolean } {
  return {
    names: [],
    definitions: [],
    actions: [],
    targets: [],
    bulkFailures: new Set(),
    bulkDelays: new Map(),
    bucket: false,
  };
}

/**
 * Draws the scenarios of one seed. `present` names the workload's definitions: a scenario that
 * needs a definition the workload did not draw adds its own (under the same name, so the
 * workload's replies and controls reach it too).
 */
export function drawScenarios(
  random: Random,
  options: { readonly present: readonly string[]; readonly bus: boolean; readonly replyPartitions: number },
): Scenarios {
  const out = noScenarios();
  const has = (name: string) =>
    options.present.includes(name) || out.definitions.some((d) => d.name === name);
  const partition = () => random.int(options.replyPartitions);
  const at = () => random.int(10_000);

  // A splitter fan-out above the completion trigger's threshold (128) whose
  // responder answers in index order, one reply of a block that is not the last one a failure the
  // definition tolerates: the batch holding it must still leave its block's mark, or the set is
  // never seen complete and the aggregate times out although every reply is in.
  if (random.chance(SCENARIO_RATES.bulk)) {
    out.names.push('bulk');
    out.targets.push(BULK_TARGET);
    const tolerated = random.between(1, 2);
    out.definitions.push({
      name: 'bulk',
      fanOut: { type: 'splitter', itemsPath: '$.items', target: BULK_TARGET },
      completion: { strategy: 'all' },
      // Longer than a fan-out's redelivery after a failed send (its visibility timeout).
      timeoutSeconds: 900,
      toleratedFailureCount: tolerated,
      writeShards: random.pick([1, 2]),
    });
    const expected = random.between(129, 170);
    const aggregateId = `x-bulk-${random.int(1000)}`;
    // The last reply id of a block other than the final one (blocks of 32: engine/members.ts).
    const blocks = Math.floor((expected - 1) / 32);
    for (let f = 0; f < tolerated; f += 1) {
      const block = random.int(blocks);
      const id = block * 32 + 31;
      out.bulkFailures.add(`${aggregateId}\u0000${id}`);
    }
    out.actions.push(splitterRequest('bulk', aggregateId, expected, at()));
  }

  // A definition whose custom aggregation reads its stored request, opened by a
  // request too large for an item (kept in the bucket), and a second large request with another
  // request id taking the same aggregate id (refused): the aggregation must read the first.
  if (random.chance(SCENARIO_RATES.stolen)) {
    out.names.push('stolen');
    out.bucket = true;
    if (!has('custom')) {
      out.definitions.push({
        name: 'custom',
        fanOut: { type: 'none' },
        completion: { strategy: 'count', count: 2 },
        aggregation: { algorithm: 'custom', expression: '{ "n": $count(replies), "tag": request.body.tag }' },
        timeoutSeconds: 60,
        outputs: { eventBridge: options.bus },
      });
    }
    const aggregateId = `x-stolen-${random.int(1000)}`;
    const t = at();
    const request = (requestId: string, fill: string) => ({
      definition: 'custom',
      requestId,
      aggregateId,
      expected: 2,
      tag: requestId,
      padding: fill.repeat(360_000),
    });
    out.actions.push(
      {
        at: t,
        queue: 'ingress',
        body: JSON.stringify(request(`r-${aggregateId}`, 'p')),
        attributes: {},
        claimCheck: true,
        aggregateId,
        kind: 'request',
      },
      {
        at: t + random.between(50, 2000),
        queue: 'ingress',
        body: JSON.stringify(request(`r-${aggregateId}-other`, 'q')),
        attributes: {},
        claimCheck: true,
        aggregateId,
        kind: 'request',
      },
    );
    for (const replyId of ['0', '1']) {
      out.actions.push(
        replyAction(random, 'custom', aggregateId, replyId, t + random.between(2500, 8000), partition()),
      );
    }
  }

  // An `all` aggregate of about 2,000 replies with 250-character reply ids, whose
  // member set (over 400 KB) cannot be kept on the header item.
  if (random.chance(SCENARIO_RATES.members)) {
    out.names.push('members');
    out.definitions.push({
      name: 'members',
      fanOut: { type: 'none' },
      completion: { strategy: 'all' },
      timeoutSeconds: 300,
    });
    const aggregateId = `x-members-${random.int(1000)}`;
    const expected = random.between(1_800, 2_000);
    const t = at();
    out.actions.push({
      at: t,
      queue: 'ingress',
      body: JSON.stringify({ definition: 'members', requestId: `r-${aggregateId}`, aggregateId, expected }),
      attributes: {},
      aggregateId,
      kind: 'request',
    });
    for (let r = 0; r < expected; r += 1) {
      const replyId = `${r}-`.padEnd(250, 'r');
      out.actions.push(
        replyAction(random, 'members', aggregateId, replyId, t + random.int(10_000), partition()),
      );
    }
  }

  // An aggregate whose deadline (from its request's `parameters`, or from
  // `set-parameters` before it opened) lies beyond an item's default life (the tombstone
  // retention, 30 days), waiting on replies that never all come: its replies must live as long as
  // it may stay open, whatever TTL sweeps run meanwhile.
  if (random.chance(SCENARIO_RATES.long)) {
    out.names.push('long');
    if (!has('params')) {
      out.definitions.push({
        name: 'params',
        fanOut: { type: 'none' },
        completion: { strategy: 'count', count: 3 },
        timeoutSeconds: 30,
        maxOpenSeconds: 365 * DAY,
        requestParameters: { timeoutSeconds: { min: 1, max: 365 * DAY }, count: { min: 1, max: 5 } },
      });
    }
    const aggregateId = `x-long-${random.int(1000)}`;
    const t = at();
    const timeoutSeconds = random.between(35, 45) * DAY;
    const viaControl = random.chance(0.5);
    if (viaControl) {
      out.actions.push({
        at: t,
        queue: 'control',
        body: JSON.stringify({
          command: 'set-parameters',
          definition: 'params',
          parameters: { timeoutSeconds },
        }),
        attributes: {},
        kind: 'control',
      });
    }
    out.actions.push({
      at: t + (viaControl ? 5_000 : 0),
      queue: 'ingress',
      body: JSON.stringify({
        definition: 'params',
        requestId: `r-${aggregateId}`,
        aggregateId,
        expected: 5,
        parameters: viaControl ? { count: 5 } : { timeoutSeconds, count: 5 },
      }),
      attributes: {},
      aggregateId,
      kind: 'request',
    });
    const replies = random.between(1, 3);
    for (let r = 0; r < replies; r += 1) {
      out.actions.push(
        replyAction(random, 'params', aggregateId, String(r), t + 6_000 + random.int(20_000), partition()),
      );
    }
  }

  // The first splitter fan-out again, in its exact shape (drawn last, so the seeds that draw only the scenarios
  // above run as before). The paced responder answers every reply in the first seconds but two:
  // the tolerated failure, the last reply of a block, ten minutes later (after its block's others
  // and their redeliveries are in), and the last reply of all two minutes after that. The
  // failure's batch is then the only one that can leave its block's mark, and the last reply's
  // batch the one that counts the marks. Its deadline (an hour) is long enough for a drained
  // partition's pace, so only a missing mark times it out.
  if (random.chance(SCENARIO_RATES.trigger)) {
    out.names.push('trigger');
    if (!out.targets.includes(BULK_TARGET)) out.targets.push(BULK_TARGET);
    out.definitions.push({
      name: 'trigger',
      fanOut: { type: 'splitter', itemsPath: '$.items', target: BULK_TARGET },
      completion: { strategy: 'all' },
      timeoutSeconds: 3600,
      toleratedFailureCount: 1,
      writeShards: random.pick([1, 2]),
    });
    const expected = random.between(129, 170);
    const aggregateId = `x-trigger-${random.int(1000)}`;
    // The last reply id of a block other than the final one (blocks of 32: engine/members.ts).
    const failed = random.int(Math.floor((expected - 1) / 32)) * 32 + 31;
    const key = (replyId: number) => `${aggregateId}\u0000${replyId}`;
    out.bulkFailures.add(key(failed));
    out.bulkDelays.set(key(failed), random.between(540_000, 600_000));
    out.bulkDelays.set(key(expected - 1), random.between(700_000, 760_000));
    out.actions.push(splitterRequest('trigger', aggregateId, expected, at()));
  }
  return out;
}

function replyAction(
  random: Random,
  definition: string,
  aggregateId: string,
  replyId: string,
  at: number,
  queue: number,
): Action {
  return {
    at,
    queue,
    body: JSON.stringify(replyBody(random, aggregateId, replyId)),
    attributes: {
      'fanin-definition': definition,
      'fanin-aggregate-id': aggregateId,
      'fanin-reply-id': replyId,
    },
    aggregateId,
    replyId,
    kind: 'reply',
  };
}

/** The request of a scenario's splitter of `expected` items, sent at `at`. */
function splitterRequest(definition: string, aggregateId: string, expected: number, at: number): Action {
  return {
    at,
    queue: 'ingress',
    body: JSON.stringify({
      definition,
      requestId: `r-${aggregateId}`,
      aggregateId,
      items: Array.from({ length: expected }, (_, i) => ({ sku: `s${i}` })),
    }),
    attributes: {},
    aggregateId,
    kind: 'request',
  };
}
