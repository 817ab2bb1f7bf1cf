import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { PARTITION_STATE_KEY } from '../../../infra/fanin.ts';
import type { FaninFunction } from '../../../infra/fanin-function.ts';
import { DynamoPartitionRegistry } from '../../../shared/adapters/dynamo-partition-registry.ts';
import { REPLY_DESTINATION } from '../../../shared/app.ts';
import { OUTPUT_ROLES, QueueRole } from '../../../shared/topology/topology.ts';
import { allowedActions, Expected, logicalId, type Synth, sorted, synthFanin } from './synth.ts';

/**
 * Least privilege: each handler's role allows exactly what the handler does, compared action by
 * action and resource by resource (and condition), so a grant added by mistake fails as surely as
 * one missing. What each handler calls, and where, is listed in docs/security.md.
 */

/** CDK's consume grant (given by each SQS event source). */
const CONSUME = [
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
];
/** CDK's send grant. */
const SEND = ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];
/** The state store's calls: items, TransactWriteItems' Put/Update/Delete, batch deletes, queries. */
const STATE = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];
const PAYLOADS = ['s3:GetObject', 's3:PutObject'];
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

function arn(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return `<${logicalId(stack, construct)}.Arn>`;
}

describe('Fanin IAM: each handler can do what it does and no more', () => {
  let synth: Synth;
  let withBus: Synth;

  beforeAll(() => {
    // GIVEN the test definitions (a recipient list, a splitter to a queue URL, an external event)
    // WHEN synthesized without and with an output bus and extra targets
    synth = synthFanin();
    withBus = synthFanin({
      createEventBus: true,
      extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:partner-*'],
    });
  });

  /** Log group, table (with its indexes: CDK's table grant), claim checks and outputs. */
  function stateHandler(s: Synth, fn: FaninFunction, tableActions: readonly string[] = STATE): Expected {
    const { stack, fanin } = s;
    const table = arn(stack, fanin.table);
    const outputs = OUTPUT_ROLES.map((role) => arn(stack, fanin.queues[role].queue));
    return new Expected()
      .allow(LOGS, [arn(stack, fn.logGroup)])
      .allow(tableActions, [table, `${table}/index/*`])
      .allow(PAYLOADS, [`${arn(stack, fanin.bucket)}/*`])
      .allow(SEND, outputs);
  }

  function actual(s: Synth, fn: FaninFunction): Record<string, string[]> {
    return sorted(allowedActions(s.template, logicalId(s.stack, fn.role as never)));
  }

  const TARGETS = [
    'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:bank-a',
    'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:bank-b',
    'arn:<AWS::Partition>:sqs:eu-west-1:111122223333:warehouse',
  ];

  it('fan-out: consumes ingress, state, claim checks, reads partition depths, sends to the targets, the timer queue and the outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.fanOut;
    const expected = stateHandler(synth, fn)
      .allow(CONSUME, [arn(stack, fanin.queues[QueueRole.INGRESS].queue)])
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)])
      // Picking the reply-to partition: each partition's depth (the partition state is a Query).
      .allow(
        ['sqs:GetQueueAttributes'],
        fanin.replyPartitions.map((p) => arn(stack, p.queue)),
      )
      .allow(['sqs:SendMessage', 'sqs:GetQueueUrl'], TARGETS);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('reply: consumes every partition, state, claim checks, sends to the timer queue and outputs; no routing', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.reply;
    const expected = stateHandler(synth, fn)
      .allow(
        CONSUME,
        fanin.replyPartitions.map((p) => arn(stack, p.queue)),
      )
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('timer: consumes and re-arms the timer queue, state, claim checks, outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.timer;
    const timerQueue = arn(stack, fanin.queues[QueueRole.TIMER].queue);
    const expected = stateHandler(synth, fn).allow(CONSUME, [timerQueue]).allow(SEND, [timerQueue]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('sweeper: state, claim checks and outputs; no queue to consume and no timer to arm', () => {
    const fn = synth.fanin.functions.sweeper;
    expect(actual(synth, fn)).toEqual(stateHandler(synth, fn).toObject());
  });

  it('control: consumes the control queue, state without DeleteItem, claim checks, outputs; no timer queue', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.control;
    const expected = stateHandler(
      synth,
      fn,
      STATE.filter((a) => a !== 'dynamodb:DeleteItem'),
    ).allow(CONSUME, [arn(stack, fanin.queues[QueueRole.CONTROL].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('distributor: moves between the backlog and the partitions, touches only partition state; no bucket, no outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.distributor;
    const table = arn(stack, fanin.table);
    const onlyPartitionState = ` if ${JSON.stringify({
      'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [PARTITION_STATE_KEY] },
    })}`;
    const queues = [fanin.queues[QueueRole.BACKLOG], ...fanin.replyPartitions].map((q) =>
      arn(stack, q.queue),
    );
    const expected = new Expected()
      .allow(LOGS, [arn(stack, fn.logGroup)])
      .allow(
        ['dynamodb:Query', 'dynamodb:UpdateItem'],
        [`${table}${onlyPartitionState}`, `${table}/index/*${onlyPartitionState}`],
      )
      .allow(CONSUME, queues)
      .allow(SEND, queues);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('limits the distributor to the partition key the registry really uses (PD#<REPLY_DESTINATION>)', async () => {
    // GIVEN the DynamoDB partition registry over a client that records each request
    const requests: Record<string, unknown>[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }) => {
        requests.push(command.input);
        return { Items: [] };
      },
    } as unknown as DynamoDBDocumentClient;
    const registry = new DynamoPartitionRegistry({ client, tableName: 'fanin-state' });
    // WHEN the distributor's and the operator's calls run against the reply destination
    await registry.load(REPLY_DESTINATION);
    await registry.recordCycle(REPLY_DESTINATION, 1, 12, 1_000);
    await registry.setEnabled(REPLY_DESTINATION, 0, false);
    // THEN every partition key it queries or updates is the one the policy allows
    const keys = requests.map(
      (r) =>
        (r.Key as { pk?: string } | undefined)?.pk ??
        (r.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk'],
    );
    expect(keys).toHaveLength(3);
    expect(new Set(keys)).toEqual(new Set([PARTITION_STATE_KEY]));
  });

  it('grants no action a handler does not call: no Scan, BatchGetItem, DescribeTable, stream or wildcard S3 action', () => {
    for (const fn of Object.values(synth.fanin.functions)) {
      const actions = Object.keys(actual(synth, fn));
      for (const action of actions) {
        expect(action, fn.node.path).not.toMatch(
          /^dynamodb:(Scan|BatchGetItem|DescribeTable|GetRecords|GetShardIterator|ConditionCheckItem)$|^s3:.*\*|\*$/,
        );
      }
    }
  });

  it('with an output bus every handler but the distributor may put events on that bus only', () => {
    const { stack, fanin } = withBus;
    const bus = arn(stack, fanin.eventBus as never);
    const { distributor, ...emitting } = fanin.functions;
    for (const fn of Object.values(emitting)) {
      expect(actual(withBus, fn)['events:PutEvents'], fn.node.path).toEqual([bus]);
    }
    expect(actual(withBus, distributor)['events:PutEvents']).toBeUndefined();
  });

  it('extra target queue ARNs are granted to the fan-out only', () => {
    const { fanin } = withBus;
    const partner = 'arn:aws:sqs:us-east-1:111122223333:partner-*';
    const { fanOut, ...others } = fanin.functions;
    expect(actual(withBus, fanOut)['sqs:SendMessage']).toContain(partner);
    for (const fn of Object.values(others)) {
      expect(actual(withBus, fn)['sqs:SendMessage'] ?? [], fn.node.path).not.toContain(partner);
    }
  });

  it('roles carry no AWS managed policy', () => {
    const roles = synth.template.findResources('AWS::IAM::Role');
    for (const role of Object.values(roles)) {
      expect((role.Properties as { ManagedPolicyArns?: unknown }).ManagedPolicyArns).toBeUndefined();
    }
  });
});
