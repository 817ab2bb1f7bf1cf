import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AGGREGATE_KEYS,
  Fanin,
  type FaninProps,
  PARAMETER_KEYS,
  PARTITION_STATE_KEY,
  PayloadPrefix,
} from '../../../infra/fanin.ts';
import type { FaninFunction } from '../../../infra/fanin-function.ts';
import { DynamoPartitionRegistry } from '../../../shared/adapters/dynamo-partition-registry.ts';
import {
  OUTPUT_PREFIX,
  PRODUCER_PREFIX,
  STATE_PREFIX,
  SUB_REQUEST_PREFIX,
} from '../../../shared/adapters/s3-claim-check.ts';
import { REPLY_DESTINATION } from '../../../shared/app.ts';
import { OUTPUT_ROLES, QueueRole } from '../../../shared/topology/topology.ts';
import {
  allowedActions,
  conditionValues,
  DEFINITIONS,
  Expected,
  logicalId,
  type Resource,
  render,
  type Statement,
  type Synth,
  sendDeny,
  sorted,
  synthFanin,
  testApp,
} from './synth.ts';

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
/**
 * The state store's calls on an aggregate's items: items, TransactWriteItems' Put/Update/Delete,
 * queries. No BatchWriteItem (mutant killed: "BatchWriteItem kept in STATE_ACTIONS", as at 329f56a).
 */
const STATE = [
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
];
const LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

/** `<resource> if <condition>` as allowedActions renders a conditional grant. */
function leadingKeys(resource: string, keys: readonly string[]): string {
  const operator = keys.some((k) => k.includes('*'))
    ? 'ForAllValues:StringLike'
    : 'ForAllValues:StringEquals';
  return `${resource} if ${JSON.stringify({ [operator]: { 'dynamodb:LeadingKeys': keys } })}`;
}

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

  /**
   * Log group, the aggregate items of the table (`A#*` only, no index), claim checks (read
   * `incoming/`, read and write `state/` and `outputs/`) and outputs.
   */
  function stateHandler(s: Synth, fn: FaninFunction, tableActions: readonly string[] = STATE): Expected {
    const { stack, fanin } = s;
    const table = arn(stack, fanin.table);
    const bucket = arn(stack, fanin.bucket);
    const outputs = OUTPUT_ROLES.map((role) => arn(stack, fanin.queues[role].queue));
    return new Expected()
      .allow(LOGS, [arn(stack, fn.logGroup)])
      .allow(tableActions, [leadingKeys(table, [AGGREGATE_KEYS])])
      .allow(['s3:GetObject'], [`${bucket}/incoming/*`, `${bucket}/state/*`, `${bucket}/outputs/*`])
      .allow(['s3:PutObject'], [`${bucket}/state/*`, `${bucket}/outputs/*`])
      .allow(SEND, outputs);
  }

  const table = (s: Synth): string => arn(s.stack, s.fanin.table);

  function actual(s: Synth, fn: FaninFunction): Record<string, string[]> {
    return sorted(allowedActions(s.template, logicalId(s.stack, fn.role as never)));
  }

  const TARGETS = [
    'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:bank-a',
    'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:bank-b',
    'arn:<AWS::Partition>:sqs:eu-west-1:111122223333:warehouse',
  ];

  it('fan-out: consumes ingress, aggregates, reads parameters and partition state and depths, sends to the targets, the timer queue and the outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.fanOut;
    const expected = stateHandler(synth, fn)
      .allow(['dynamodb:GetItem'], [leadingKeys(table(synth), [PARAMETER_KEYS])])
      .allow(['dynamodb:Query'], [leadingKeys(table(synth), [PARTITION_STATE_KEY])])
      .allow(['s3:PutObject'], [`${arn(stack, fanin.bucket)}/requests/*`])
      .allow(CONSUME, [arn(stack, fanin.queues[QueueRole.INGRESS].queue)])
      // Its continuation: a fan-out out of time queues its own request again (SendMessage only).
      .allow(['sqs:SendMessage'], [arn(stack, fanin.queues[QueueRole.INGRESS].queue)])
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)])
      // Picking the reply-to partition: each partition's depth (the partition state is a Query).
      .allow(
        ['sqs:GetQueueAttributes'],
        fanin.replyPartitions.map((p) => arn(stack, p.queue)),
      )
      .allow(['sqs:SendMessage', 'sqs:GetQueueUrl'], TARGETS);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('reply: consumes every partition, aggregates, reads parameters, claim checks, sends to the timer queue and outputs; no routing', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.reply;
    const expected = stateHandler(synth, fn)
      .allow(['dynamodb:GetItem'], [leadingKeys(table(synth), [PARAMETER_KEYS])])
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

  it('sweeper: aggregates, queries the due index only, claim checks and outputs, arms timers entering the horizon; no queue to consume', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.sweeper;
    const expected = stateHandler(synth, fn)
      .allow(['dynamodb:Query'], [`${table(synth)}/index/due`])
      .allow(SEND, [arn(stack, fanin.queues[QueueRole.TIMER].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('control: consumes the control queue and sends its own continuations there, reads and updates aggregates but never puts or deletes one, writes parameters, queries the due index only, claim checks, outputs; no timer queue', () => {
    // Mutant killed: "control puts aggregate items" (PutItem on A#*: it could write any reply or
    // header; list, complete and purge read aggregates and update their headers only).
    const { stack, fanin } = synth;
    const fn = fanin.functions.control;
    const expected = stateHandler(synth, fn, ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'])
      .allow(['dynamodb:PutItem'], [leadingKeys(table(synth), [PARAMETER_KEYS])])
      .allow(['dynamodb:Query'], [`${table(synth)}/index/due`])
      .allow(CONSUME, [arn(stack, fanin.queues[QueueRole.CONTROL].queue)])
      .allow(['sqs:SendMessage'], [arn(stack, fanin.queues[QueueRole.CONTROL].queue)]);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it('distributor: moves between the backlog and the partitions, touches only partition state; no bucket, no outputs', () => {
    const { stack, fanin } = synth;
    const fn = fanin.functions.distributor;
    const queues = [fanin.queues[QueueRole.BACKLOG], ...fanin.replyPartitions].map((q) =>
      arn(stack, q.queue),
    );
    const expected = new Expected()
      .allow(LOGS, [arn(stack, fn.logGroup)])
      .allow(['dynamodb:Query', 'dynamodb:UpdateItem'], [leadingKeys(table(synth), [PARTITION_STATE_KEY])])
      .allow(CONSUME, queues)
      .allow(SEND, queues);
    expect(actual(synth, fn)).toEqual(expected.toObject());
  });

  it("limits the distributor and the fan-out's partition-state reads to the partition key the registry really uses (PD#<REPLY_DESTINATION>)", async () => {
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

  it('grants no action a handler does not call: no Scan, BatchGetItem, BatchWriteItem, DescribeTable, stream or wildcard S3 action', () => {
    // Mutant killed: "BatchWriteItem kept in STATE_ACTIONS" (329f56a granted it to five roles).
    for (const fn of Object.values(synth.fanin.functions)) {
      const actions = Object.keys(actual(synth, fn));
      for (const action of actions) {
        expect(action, fn.node.path).not.toMatch(
          /^dynamodb:(Scan|BatchGetItem|BatchWriteItem|DescribeTable|GetRecords|GetShardIterator|ConditionCheckItem)$|^s3:.*\*|\*$/,
        );
      }
    }
  });

  it('GIVEN any role WHEN it may touch the table THEN every item grant carries a LeadingKeys condition, and only Query reaches an index, by name', () => {
    // Mutant killed: "table grant without dynamodb:LeadingKeys" (329f56a: five roles unconditioned on
    // the table and on <table>/index/*).
    const tableArn = table(synth);
    for (const fn of Object.values(synth.fanin.functions)) {
      for (const [action, resources] of Object.entries(actual(synth, fn))) {
        if (!action.startsWith('dynamodb:')) continue;
        for (const resource of resources) {
          if (resource.startsWith(`${tableArn}/index/`)) {
            expect(action, fn.node.path).toBe('dynamodb:Query');
            expect(resource, fn.node.path).toMatch(/\/index\/(due|open)$/);
          } else {
            expect(resource, `${fn.node.path} ${action}`).toMatch(
              new RegExp(`^${tableArn.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} if .*dynamodb:LeadingKeys`),
            );
          }
        }
      }
    }
  });

  it('GIVEN any role WHEN it may write to the bucket THEN only under state/, requests/ or outputs/, and it reads nothing outside incoming/, state/, outputs/', () => {
    // Mutant killed: "object grant on <bucket>/*" (329f56a): a role could write where producers write.
    const bucket = arn(synth.stack, synth.fanin.bucket);
    for (const fn of Object.values(synth.fanin.functions)) {
      const granted = actual(synth, fn);
      for (const resource of granted['s3:PutObject'] ?? []) {
        expect(resource, fn.node.path).toMatch(/\/(state|requests|outputs)\/\*$/);
      }
      for (const resource of granted['s3:GetObject'] ?? []) {
        expect([`${bucket}/incoming/*`, `${bucket}/state/*`, `${bucket}/outputs/*`], fn.node.path).toContain(
          resource,
        );
      }
    }
  });

  it("GIVEN wildcard extra targets WHEN a request names fanin's control, backlog, reply or dead-letter queues THEN the fan-out role denies sending there, and not to ingress (its continuation) nor the timer queue", () => {
    // Mutant killed: "no Deny on own inbound queues": a recipient `fanin-control` would let a request
    // forge control commands with the fan-out's role.
    const { stack, fanin, template } = withBus;
    const role = logicalId(stack, fanin.functions.fanOut.role as never);
    const denied = new Set<string>();
    for (const policy of Object.values(template.findResources('AWS::IAM::Policy'))) {
      const props = policy.Properties as {
        Roles: unknown[];
        PolicyDocument: { Statement: { Effect: string; Action: unknown; Resource: unknown[] }[] };
      };
      if (!props.Roles.some((r) => JSON.stringify(r).includes(role))) continue;
      for (const statement of props.PolicyDocument.Statement) {
        if (statement.Effect !== 'Deny') continue;
        expect(statement.Action).toBe('sqs:SendMessage');
        for (const resource of statement.Resource) denied.add(JSON.stringify(resource));
      }
    }
    const inbound = [
      fanin.queues[QueueRole.CONTROL],
      fanin.queues[QueueRole.BACKLOG],
      ...fanin.replyPartitions,
    ];
    for (const queue of inbound) {
      expect(denied).toContain(JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, queue.queue), 'Arn'] }));
    }
    for (const queue of [...Object.values(fanin.queues), ...fanin.replyPartitions]) {
      expect(denied).toContain(
        JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, queue.deadLetterQueue), 'Arn'] }),
      );
    }
    // and never the queues it must send to: the timer queue, and ingress for its continuation
    for (const role of [QueueRole.TIMER, QueueRole.INGRESS]) {
      expect(denied, role).not.toContain(
        JSON.stringify({ 'Fn::GetAtt': [logicalId(stack, fanin.queues[role].queue), 'Arn'] }),
      );
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

  it('a definition that cancels its recipients lets every completer send to its targets, and only to those', () => {
    const cancelling = synthFanin({
      definitions: [
        ...DEFINITIONS,
        {
          name: 'cancels',
          completion: { strategy: 'first' },
          fanOut: { type: 'splitter', itemsPath: '$.items', target: 'responder-x' },
          cancelOutstanding: true,
        },
      ],
    });
    const target = 'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:responder-x';
    const { fanOut, distributor, ...completers } = cancelling.fanin.functions;
    for (const fn of Object.values(completers)) {
      const allowed = actual(cancelling, fn);
      expect(allowed['sqs:SendMessage'], fn.node.path).toContain(target);
      expect(allowed['sqs:GetQueueUrl'], fn.node.path).toContain(target);
      // not the targets of the definitions that do not cancel
      expect(allowed['sqs:SendMessage'], fn.node.path).not.toContain(TARGETS[0]);
    }
    expect(actual(cancelling, distributor)['sqs:SendMessage'] ?? []).not.toContain(target);
    // without a cancelling definition no completer may send to a target
    for (const fn of Object.values(completers)) {
      for (const t of TARGETS)
        expect(actual(synth, fn)['sqs:SendMessage'] ?? [], fn.node.path).not.toContain(t);
    }
  });

  it('a definition that retries its sub-requests lets every completer send to its targets, and only to those', () => {
    const retrying = synthFanin({
      definitions: [
        ...DEFINITIONS,
        {
          name: 'retries',
          completion: { strategy: 'all' },
          fanOut: { type: 'splitter', itemsPath: '$.items', target: 'responder-y' },
          timeoutSeconds: 60,
          responders: { retry: { attempts: 1, intervalSeconds: 10 } },
        },
      ],
    });
    const target = 'arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:responder-y';
    const { fanOut, distributor, ...completers } = retrying.fanin.functions;
    for (const fn of [completers.reply, completers.timer, completers.sweeper]) {
      const allowed = actual(retrying, fn);
      expect(allowed['sqs:SendMessage'], fn.node.path).toContain(target);
      expect(allowed['sqs:SendMessage'], fn.node.path).not.toContain(TARGETS[0]);
    }
    expect(actual(retrying, distributor)['sqs:SendMessage'] ?? []).not.toContain(target);
  });

  it("uses the runtime's own claim-check prefixes (shared/adapters/s3-claim-check.ts)", () => {
    expect(PayloadPrefix).toEqual({
      INCOMING: PRODUCER_PREFIX,
      STATE: STATE_PREFIX,
      REQUESTS: SUB_REQUEST_PREFIX,
      OUTPUTS: OUTPUT_PREFIX,
    });
  });

  it('GIVEN a producer and a responder role WHEN granted through the construct THEN the producer may write only under incoming/ and the reader may read requests/, outputs/, incoming/, never state/', () => {
    // Mutant killed: "grantLargeMessageWrites on <bucket>/*": a producer could replace a stored body.
    const stack = new Stack(testApp(), 'Test');
    const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS });
    const producer = new iam.Role(stack, 'Producer', { assumedBy: new iam.AccountRootPrincipal() });
    const responder = new iam.Role(stack, 'Responder', { assumedBy: new iam.AccountRootPrincipal() });
    fanin.grantLargeMessageWrites(producer);
    fanin.grantLargeMessageReads(responder);
    const template = Template.fromStack(stack);
    const bucket = arn(stack, fanin.bucket);
    expect(sorted(allowedActions(template, logicalId(stack, producer)))).toEqual({
      's3:PutObject': [`${bucket}/incoming/*`],
    });
    expect(sorted(allowedActions(template, logicalId(stack, responder)))).toEqual({
      's3:GetObject': [`${bucket}/incoming/*`, `${bucket}/outputs/*`, `${bucket}/requests/*`],
    });
  });

  it('roles carry no AWS managed policy', () => {
    const roles = synth.template.findResources('AWS::IAM::Role');
    for (const role of Object.values(roles)) {
      expect((role.Properties as { ManagedPolicyArns?: unknown }).ManagedPolicyArns).toBeUndefined();
    }
  });
});

/**
 * The external-event rules deliver control input: they take only events put by the accounts the
 * deployment allows to send control commands, and a bus of the app refuses those events' sources
 * to any principal `controlSenders` does not list.
 */

const OPERATOR = 'arn:aws:iam::111122223333:role/fanin-operator';
const PARTNER = '444455556666';

function synth(props: Partial<FaninProps>, withBus = false) {
  const stack = new Stack(testApp(), 'Test', { env: { account: '999988887777', region: 'us-east-1' } });
  const bus = withBus ? new events.EventBus(stack, 'Shop', { eventBusName: 'shop' }) : undefined;
  const fanin = new Fanin(stack, 'Fanin', {
    definitions: DEFINITIONS,
    ...(bus ? { externalEventBus: bus } : {}),
    ...props,
  });
  return { stack, fanin, template: Template.fromStack(stack), bus };
}

function patternOf(s: ReturnType<typeof synth>): Record<string, unknown> {
  const rule = s.fanin.externalEventRules.get('approval');
  if (!rule) throw new Error('no approval rule');
  const resource = s.template.toJSON().Resources[logicalId(s.stack, rule)];
  return resource.Properties.EventPattern as Record<string, unknown>;
}

describe('external-event rules: only the allowed senders', { timeout: 60_000 }, () => {
  it("GIVEN no controlSenders WHEN synthesized THEN the rule matches the definition's pattern and only events of fanin's own account", () => {
    // Mutant killed: "rule pattern without account" (fencedEventPattern returning the pattern as
    // it is): an event put by any account the bus accepts would complete aggregates.
    expect(patternOf(synth({}))).toEqual({
      source: ['shop.orders'],
      'detail-type': ['OrderApproved'],
      account: ['999988887777'],
    });
  });

  it('GIVEN controlSenders with a role ARN and an account WHEN synthesized THEN the rule matches only events of those accounts', () => {
    // Mutant killed: "principal ARNs' accounts ignored" (externalEventAccounts without the ARN case).
    const s = synth({ controlSenders: [OPERATOR, PARTNER] });
    expect((patternOf(s).account as string[]).sort()).toEqual(['111122223333', PARTNER]);
  });

  it('GIVEN controlSenders naming only a topic WHEN the construct is created THEN it throws: no event could pass', () => {
    expect(() => synth({ controlSenders: ['arn:aws:sns:us-east-1:111122223333:ops'] })).toThrow(
      /controlSenders names no account, IAM principal or role/,
    );
  });

  it('GIVEN a definition pattern naming an account controlSenders does not allow WHEN the construct is created THEN it throws naming it', () => {
    const definitions = DEFINITIONS.map((d) =>
      d.name === 'approval'
        ? { ...d, externalEventPattern: { ...d.externalEventPattern, account: ['123456789012'] } }
        : d,
    );
    expect(() => synth({ definitions, controlSenders: [OPERATOR] })).toThrow(
      /externalEventPattern.account names \["123456789012"\]/,
    );
  });

  it('GIVEN controlSenders and a bus of the app WHEN synthesized THEN the bus denies putting events of the rules’ sources to every principal not listed', () => {
    // Mutant killed: "no bus policy" (fenceExternalEventBus not called): any principal of an
    // allowed account could put an event that completes an aggregate.
    const s = synth({ controlSenders: [OPERATOR, PARTNER] }, true);
    const policies = Object.values(s.template.findResources('AWS::Events::EventBusPolicy'));
    const statements = policies.map((p) => p.Properties.Statement as Record<string, unknown>);
    const deny = statements.find((st) => st.Sid === 'cdk-OnlyControlSendersPutExternalEvents');
    expect(deny).toMatchObject({ Effect: 'Deny', Action: 'events:PutEvents', Principal: { AWS: '*' } });
    expect(deny?.Condition).toEqual({
      StringEquals: { 'events:source': ['shop.orders'] },
      StringNotLike: { 'aws:PrincipalArn': [OPERATOR] },
      StringNotEquals: { 'aws:PrincipalAccount': [PARTNER] },
    });
    expect(render(deny?.Resource)).toBe(`<${logicalId(s.stack, s.bus as never)}.Arn>`);
  });

  it('GIVEN controlSenders and an imported bus WHEN synthesized THEN no bus policy is written (the owner fences it) and the rule still filters by account', () => {
    const stack = new Stack(testApp(), 'Test', { env: { account: '999988887777', region: 'us-east-1' } });
    const bus = events.EventBus.fromEventBusArn(
      stack,
      'Bus',
      'arn:aws:events:us-east-1:999988887777:event-bus/shop',
    );
    const role = iam.Role.fromRoleArn(stack, 'Operator', OPERATOR);
    const fanin = new Fanin(stack, 'Fanin', {
      definitions: DEFINITIONS,
      externalEventBus: bus,
      controlSenders: [role],
    });
    const template = Template.fromStack(stack);
    expect(template.findResources('AWS::Events::EventBusPolicy')).toEqual({});
    const rule = fanin.externalEventRules.get('approval');
    expect(
      template.toJSON().Resources[logicalId(stack, rule as never)].Properties.EventPattern.account,
    ).toEqual(['111122223333']);
  });
});

describe('trust model: who may send', () => {
  const PRODUCER = 'arn:aws:iam::111122223333:role/producer-*';
  const PARTNER = '444455556666';
  const TOPIC = 'arn:aws:sns:us-east-1:111122223333:orders';
  let restricted: Synth;
  let open: Synth;

  beforeAll(() => {
    open = synthFanin();
    const app = testApp();
    const stack = new Stack(app, 'Test');
    const operator = iam.Role.fromRoleArn(stack, 'Operator', 'arn:aws:iam::111122223333:role/fanin-operator');
    const fanin = new Fanin(stack, 'Fanin', {
      definitions: DEFINITIONS,
      ingressSenders: [PRODUCER, TOPIC],
      replySenders: [PARTNER],
      controlSenders: [operator],
    });
    restricted = { stack, fanin, template: Template.fromStack(stack) };
  });

  it('GIVEN no sender props WHEN synthesized THEN no queue policy restricts senders (the account, as before)', () => {
    const queues = Object.keys(open.template.findResources('AWS::SQS::Queue'));
    for (const id of queues) expect(sendDeny(open.template, id), id).toBeUndefined();
  });

  it('GIVEN ingressSenders WHEN synthesized THEN the ingress policy denies sqs:SendMessage to anyone not listed (principal ARN, or source ARN)', () => {
    // Mutant killed: "ingressSenders ignored" (329f56a has no such prop: anyone in the account may send).
    const { stack, fanin, template } = restricted;
    const deny = sendDeny(template, logicalId(stack, fanin.queues[QueueRole.INGRESS].queue));
    expect(deny).toMatchObject({ Effect: 'Deny', Action: 'sqs:SendMessage' });
    // The fan-out's role always passes: a fan-out out of time queues its request again to ingress.
    // Mutant killed: "ingress senders without the fan-out role" (its continuation would be denied).
    const fanOutRole = `<${logicalId(stack, fanin.functions.fanOut.role as never)}.Arn>`;
    expect(conditionValues(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([fanOutRole, PRODUCER]);
    expect(conditionValues(deny, 'ArnNotLike', 'aws:SourceArn')).toEqual([TOPIC]);
    expect(deny?.Condition?.StringNotEquals).toBeUndefined();
  });

  it('GIVEN replySenders WHEN synthesized THEN every reply partition and the backlog deny senders outside the listed account, the distributor role always allowed', () => {
    // Mutant killed: "replySenders applied to the partitions but not the backlog", and "distributor
    // locked out" (its moves would fail).
    const { stack, fanin, template } = restricted;
    const distributorRole = `<${logicalId(stack, fanin.functions.distributor.role as never)}.Arn>`;
    for (const queue of [fanin.queues[QueueRole.BACKLOG], ...fanin.replyPartitions]) {
      const deny = sendDeny(template, logicalId(stack, queue.queue));
      expect(deny, queue.node.path).toMatchObject({ Effect: 'Deny', Action: 'sqs:SendMessage' });
      expect(conditionValues(deny, 'StringNotEquals', 'aws:PrincipalAccount')).toEqual([PARTNER]);
      expect(conditionValues(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([distributorRole]);
    }
    // and no other queue is restricted by it
    expect(sendDeny(template, logicalId(stack, fanin.queues[QueueRole.TIMER].queue))).toBeUndefined();
  });

  it("GIVEN controlSenders WHEN synthesized THEN the control queue denies all but the operator role, the control role (its continuations) and the construct's external-event rules", () => {
    // Mutant killed: "controlSenders ignored" (anyone in the account could purge all), and "external
    // event rules locked out" (EventBridge delivers as a service, matched by aws:SourceArn).
    const { stack, fanin, template } = restricted;
    const deny = sendDeny(template, logicalId(stack, fanin.queues[QueueRole.CONTROL].queue));
    expect(deny).toMatchObject({ Effect: 'Deny', Action: 'sqs:SendMessage' });
    // The control role always passes: a complete or purge of a whole definition sends its
    // continuation to the control queue. Mutant killed: "control senders without the control
    // role" (the continuation would be denied, the command retried into the DLQ half done).
    const controlRole = `<${logicalId(stack, fanin.functions.control.role as never)}.Arn>`;
    expect(conditionValues(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([
      controlRole,
      'arn:aws:iam::111122223333:role/fanin-operator',
    ]);
    const rule = fanin.externalEventRules.get('approval');
    expect(rule).toBeDefined();
    expect(conditionValues(deny, 'ArnNotLike', 'aws:SourceArn')).toEqual([
      `<${logicalId(stack, rule!)}.Arn>`,
    ]);
  });
});

describe('claim-check pointers: producers write only under incoming/', () => {
  it('GIVEN the defaults WHEN synthesized THEN the bucket policy denies s3:PutObject under state/, requests/ and outputs/ to every principal but the fanin roles that store payloads', () => {
    // Mutant killed: "no bucket fence" (329f56a): any principal of the account allowed by its IAM
    // could overwrite a stored body that an aggregate's state references.
    const { stack, fanin, template } = synthFanin();
    const policy = Object.values(template.findResources('AWS::S3::BucketPolicy'))[0] as Resource;
    const statements = (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement;
    const fence = statements.find((s) => s.Sid === 'OnlyFaninWritesStateAndOutputs');
    expect(fence).toMatchObject({ Effect: 'Deny', Action: 's3:PutObject', Principal: { AWS: '*' } });
    const bucket = `<${logicalId(stack, fanin.bucket)}.Arn>`;
    expect(((fence?.Resource ?? []) as unknown[]).map(render).sort()).toEqual([
      `${bucket}/outputs/*`,
      `${bucket}/requests/*`,
      `${bucket}/state/*`,
    ]);
    const { distributor, ...payloadHandlers } = fanin.functions;
    expect(conditionValues(fence, 'StringNotLike', 'aws:PrincipalArn').sort()).toEqual(
      Object.values(payloadHandlers)
        .map((fn) => `<${logicalId(stack, fn.role as never)}.Arn>`)
        .sort(),
    );
    expect(conditionValues(fence, 'StringNotLike', 'aws:PrincipalArn')).not.toContain(
      `<${logicalId(stack, distributor.role as never)}.Arn>`,
    );
  });
});
