import type { Stack } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { FaninFunction } from '../../../infra/fanin-function.ts';
import { OUTPUT_ROLES, QueueRole } from '../../../shared/topology/topology.ts';
import { allowedActions, Expected, logicalId, type Synth, sorted, synthFanin } from './synth.ts';

/**
 * Least privilege: each handler's role allows exactly what the handler does, compared action by
 * action and resource by resource, so a grant added by mistake fails as surely as one missing.
 */

const CONSUME = [
  'sqs:ReceiveMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueUrl',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
];
const SEND = ['sqs:SendMessage', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl'];
const TABLE_RW = [
  'dynamodb:BatchGetItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DeleteItem',
  'dynamodb:DescribeTable',
  'dynamodb:GetItem',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:Scan',
  'dynamodb:UpdateItem',
];
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

  function base(s: Synth, fn: FaninFunction): Expected {
    const { stack, fanin } = s;
    const table = arn(stack, fanin.table);
    const outputs = OUTPUT_ROLES.map((role) => arn(stack, fanin.queues[role].queue));
    return new Expected()
      .allow(LOGS, [arn(stack, fn.logGroup)])
      .allow(TABLE_RW, [table, `${table}/index/*`])
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

  it('fan-out: consumes ingress, state, sends to the targets, the timer queue and the outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.fanOut;
    const expected = base(synth, fn)
      .allow(CONSUME, [arn(stack, fanin.queues[QueueRole.INGRESS].queue)])
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)])
      .allow(['sqs:SendMessage', 'sqs:GetQueueUrl'], TARGETS);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('reply: consumes every partition, state, reads claim checks, sends to the timer queue and outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.reply;
    const expected = base(synth, fn)
      .allow(
        CONSUME,
        fanin.replyPartitions.map((p) => arn(stack, p.queue)),
      )
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)])
      .allow(['s3:GetObject'], [`${arn(stack, fanin.bucket)}/*`]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('timer: consumes and re-arms the timer queue, state, outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.timer;
    const timerQueue = arn(stack, fanin.queues[QueueRole.TIMER].queue);
    const expected = base(synth, fn).allow(CONSUME, [timerQueue]).allow(SEND, [timerQueue]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('sweeper: state, the timer queue and outputs; no queue to consume', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.sweeper;
    const expected = base(synth, fn).allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('control: consumes the control queue, state, outputs; no timer queue', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.control;
    const expected = base(synth, fn).allow(CONSUME, [arn(stack, fanin.queues[QueueRole.CONTROL].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('with an output bus every handler may put events on that bus only', () => {
    const { stack, fanin } = withBus;
    const bus = arn(stack, fanin.eventBus as never);
    for (const fn of Object.values(fanin.functions)) {
      expect(actual(withBus, fn)['events:PutEvents']).toEqual([bus]);
    }
  });

  it('extra target queue ARNs are granted to the fan-out only', () => {
    const { fanin } = withBus;
    const partner = 'arn:aws:sqs:us-east-1:111122223333:partner-*';
    expect(actual(withBus, fanin.functions.fanOut)['sqs:SendMessage']).toContain(partner);
    for (const fn of [
      fanin.functions.reply,
      fanin.functions.timer,
      fanin.functions.sweeper,
      fanin.functions.control,
    ]) {
      expect(actual(withBus, fn)['sqs:SendMessage']).not.toContain(partner);
    }
  });

  it('roles carry no AWS managed policy', () => {
    const roles = synth.template.findResources('AWS::IAM::Role');
    for (const role of Object.values(roles)) {
      expect((role.Properties as { ManagedPolicyArns?: unknown }).ManagedPolicyArns).toBeUndefined();
    }
  });
});
