/**
 * What the models' unit tests share: a clock the test moves, a random source that replays the
 * draws the test gives (so every chance a model takes is decided by the test), and fanin's state
 * table on a DynamoDB model.
 */
import { describeTopology } from '../../../../shared/topology/topology.ts';
import { DynamoDbModel, SqsModel } from '../../../../sim/models/index.ts';

export const T0 = 1_700_000_000_000;
export const TABLE = 'state';

/** A clock the test moves, and a random source that replays `draws` (then repeats the last). */
export function world(draws: number[] = [0.5]) {
  let now = T0;
  let i = 0;
  return {
    clock: () => now,
    random: () => draws[Math.min(i++, draws.length - 1)] as number,
    advance: (ms: number) => {
      now += ms;
    },
    replay: (next: number[]) => {
      draws = next;
      i = 0;
    },
  };
}

export type TestWorld = ReturnType<typeof world>;

/** A DynamoDB model holding fanin's state table: pk/sk, a TTL attribute and the sparse `due` index. */
export function dynamo(w: TestWorld, options: { staleMs?: number; staleProbability?: number } = {}) {
  const model = new DynamoDbModel({ clock: w.clock, random: w.random, ...options });
  // The table as the stack creates it (the topology's keys, TTL and index), under the tests' name.
  model.createTable({ ...describeTopology({ definitions: [] }).table, name: TABLE });
  return model;
}

/** An SQS model that never duplicates nor shortens a receive unless the test asks. */
export function sqs(
  w: TestWorld,
  options: { duplicateProbability?: number; staleDeleteIgnoredProbability?: number } = {},
) {
  return new SqsModel({
    clock: w.clock,
    random: w.random,
    duplicateProbability: 0,
    shortReceiveProbability: 0,
    ...options,
  });
}

export const receive = (model: SqsModel, QueueUrl: string, extra: Record<string, unknown> = {}) =>
  (model.handle('ReceiveMessageCommand', {
    QueueUrl,
    MaxNumberOfMessages: 10,
    MessageSystemAttributeNames: ['All'],
    ...extra,
  }).Messages ?? []) as { Body: string; ReceiptHandle: string; Attributes: Record<string, string> }[];
