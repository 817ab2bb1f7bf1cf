import { Duration, Fn, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALARM_NAMESPACE, Fanin, type FaninProps } from '../../../infra/fanin.ts';
import { ConfigEnv } from '../../../shared/config.ts';
import { stateLifeSeconds } from '../../../shared/engine/definition.ts';
import { Alarm } from '../../../shared/ports.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { construct, DEFINITIONS, logicalId, render, type Synth, synthFanin, testApp } from './synth.ts';

/**
 * Issue 11 ("Exactly one correct result under adversity"), the construct's part: each test pins
 * one fact of the synthesized template and names the mutant of infra/ it kills. Each fails on
 * infra/ as it was at commit 329f56a.
 */

type Resource = { Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

const DAY = 24 * 3600;

/** Every statement of the queue policies that guard this queue (by logical id). */
function queueStatements(template: Template, queueId: string): Statement[] {
  return Object.values(template.findResources('AWS::SQS::QueuePolicy')).flatMap((policy) => {
    const props = (policy as Resource).Properties as {
      Queues: unknown[];
      PolicyDocument: { Statement: Statement[] };
    };
    return props.Queues.some((q) => render(q) === `<${queueId}>`) ? props.PolicyDocument.Statement : [];
  });
}

function sendDeny(template: Template, queueId: string): Statement | undefined {
  return queueStatements(template, queueId).find((s) => s.Sid === 'OnlyListedSenders');
}

/** A condition's values, rendered (`<Role.Arn>` for a role's GetAtt). */
function values(statement: Statement | undefined, operator: string, key: string): string[] {
  const value = statement?.Condition?.[operator]?.[key];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(render);
}

function functionsOf({ template }: Synth): Resource[] {
  // The six handlers (CDK adds no other function with the defaults).
  return Object.values(template.findResources('AWS::Lambda::Function')) as Resource[];
}

function variables(fn: Resource): Record<string, unknown> {
  return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}

describe('every queue keeps messages the topology retention', () => {
  it.each<[string, Partial<FaninProps>]>([
    ['the defaults', {}],
    ['FIFO replies and four partitions', { fifoReplies: true, replyPartitions: 4 }],
  ])(
    'GIVEN %s WHEN synthesized THEN every AWS::SQS::Queue (working, output, backlog, timer, reply partitions, DLQs) has MessageRetentionPeriod = retentionSeconds',
    (_, props) => {
      // Mutant killed: "retentionPeriod only on the DLQ" (329f56a): working queues kept
      // CloudFormation's default of 4 days.
      const { fanin, template } = synthFanin(props);
      const topology = fanin.topology;
      const queues = template.findResources('AWS::SQS::Queue') as Record<string, Resource>;
      const specs = [...Object.values(topology.queues), ...topology.replyPartitions];
      expect(Object.keys(queues)).toHaveLength(2 * specs.length);
      const retention = new Map(
        specs.flatMap((s) => [
          [s.name, s.retentionSeconds],
          [s.dlqName, s.retentionSeconds],
        ]),
      );
      for (const queue of Object.values(queues)) {
        const name = String(queue.Properties.QueueName);
        expect(retention.get(name), name).toBe(1_209_600);
        expect(queue.Properties.MessageRetentionPeriod, name).toBe(retention.get(name));
      }
    },
  );

  it('GIVEN a dlqRetention other than 14 days WHEN the construct is created THEN it throws naming the value', () => {
    // Mutant killed: "dlqRetention accepted shorter" (329f56a accepted 60 s to 14 days).
    expect(construct({ dlqRetention: Duration.days(4) })).toThrow(
      /dlqRetention must be 14 days.*\(given 4 days\)/,
    );
    expect(construct({ dlqRetention: Duration.days(14) })).not.toThrow();
  });
});

describe('the completion lease comes from the function timeout', () => {
  it.each([30, 900])(
    'GIVEN functionTimeout %i s WHEN synthesized THEN every function gets FANIN_LEASE_SECONDS >= its Timeout (the topology lease)',
    (seconds) => {
      // Mutants killed: "lease not passed to the handlers" (329f56a: no FANIN_LEASE_SECONDS, the
      // handlers' fixed 120 s) and "a fixed 120 s lease" (fails at 900 s).
      const synth = synthFanin({ functionTimeout: Duration.seconds(seconds) });
      const functions = functionsOf(synth);
      expect(functions).toHaveLength(6);
      for (const fn of functions) {
        const lease = Number(variables(fn)[ConfigEnv.LEASE_SECONDS]);
        expect(fn.Properties.Timeout).toBe(seconds);
        expect(lease).toBeGreaterThanOrEqual(seconds);
        expect(lease).toBe(synth.fanin.topology.completionLeaseSeconds);
      }
    },
  );
});

describe('claim-check objects outlive the state that references them', () => {
  it('GIVEN the defaults WHEN synthesized THEN every expiration rule of the bucket is at least ceil(stateLifeSeconds / 1 day) + 1 days and covers every prefix', () => {
    // Mutant killed: "payloadExpiration defaults to 14 days" (329f56a), shorter than the 44 days a
    // tombstone-retained aggregate may reference a stored body.
    const { stack, fanin, template } = synthFanin();
    const minimum = Math.ceil(fanin.topology.stateLifeSeconds / DAY) + 1;
    expect(minimum).toBe(46);
    const bucket = template.findResources('AWS::S3::Bucket')[logicalId(stack, fanin.bucket)] as Resource;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    const expiring = rules.filter((r) => r.ExpirationInDays !== undefined || r.ExpirationDate !== undefined);
    expect(expiring.length).toBeGreaterThan(0);
    for (const rule of expiring) {
      expect(rule.ExpirationDate).toBeUndefined();
      expect(rule.ExpirationInDays as number).toBeGreaterThanOrEqual(minimum);
      // No filter narrower than the whole bucket could leave incoming/, state/ or outputs/ to another rule.
      expect(rule.Prefix ?? '').toBe('');
      expect(rule.TagFilters).toBeUndefined();
    }
  });

  it('GIVEN a definition whose state lives longer WHEN synthesized THEN the default expiration grows with it', () => {
    // Mutant killed: "a constant expiration" (any fixed number of days).
    const long = {
      name: 'slow',
      completion: { strategy: 'all' as const },
      maxOpenSeconds: 90 * DAY,
      tombstoneRetentionSeconds: 60 * DAY,
    };
    const { fanin, template } = synthFanin({ definitions: [...DEFINITIONS, long] });
    const life = stateLifeSeconds(
      fanin.topology.definitions.get('slow')!,
      fanin.topology.completionLeaseSeconds,
    );
    expect(fanin.topology.stateLifeSeconds).toBe(life);
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: Math.ceil(life / DAY) + 1 })]),
      },
    });
  });

  it('GIVEN payloadExpiration shorter than the state life WHEN the construct is created THEN it throws naming the value; the minimum itself is accepted', () => {
    // Mutant killed: "no synth check of payloadExpiration against stateLifeSeconds" (329f56a).
    expect(construct({ payloadExpiration: Duration.days(14) })).toThrow(
      /payloadExpiration must be at least 46 days: .*\(given 14 days\)/,
    );
    expect(construct({ payloadExpiration: Duration.days(45) })).toThrow(/\(given 45 days\)/);
    expect(construct({ payloadExpiration: Duration.days(46) })).not.toThrow();
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
    expect(values(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([fanOutRole, PRODUCER]);
    expect(values(deny, 'ArnNotLike', 'aws:SourceArn')).toEqual([TOPIC]);
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
      expect(values(deny, 'StringNotEquals', 'aws:PrincipalAccount')).toEqual([PARTNER]);
      expect(values(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([distributorRole]);
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
    expect(values(deny, 'StringNotLike', 'aws:PrincipalArn')).toEqual([
      controlRole,
      'arn:aws:iam::111122223333:role/fanin-operator',
    ]);
    const rule = fanin.externalEventRules.get('approval');
    expect(rule).toBeDefined();
    expect(values(deny, 'ArnNotLike', 'aws:SourceArn')).toEqual([`<${logicalId(stack, rule!)}.Arn>`]);
  });

  it.each<[string, Partial<FaninProps>, RegExp]>([
    [
      'an STS session ARN',
      { ingressSenders: ['arn:aws:sts::111122223333:assumed-role/r/s'] },
      /ingressSenders must be .*\(given \["arn:aws:sts::111122223333:assumed-role\/r\/s"\]\)/,
    ],
    [
      'an 11-digit account',
      { replySenders: ['12345678901'] },
      /replySenders must be .*\(given \["12345678901"\]\)/,
    ],
    [
      'a deploy-time string',
      { controlSenders: [Fn.importValue('operator-role-arn')] },
      /controlSenders must be .*\(given/,
    ],
  ])(
    'GIVEN %s as a sender WHEN the construct is created THEN it throws naming the value',
    (_, props, message) => {
      expect(construct(props)).toThrow(message);
    },
  );
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
    expect(values(fence, 'StringNotLike', 'aws:PrincipalArn').sort()).toEqual(
      Object.values(payloadHandlers)
        .map((fn) => `<${logicalId(stack, fn.role as never)}.Arn>`)
        .sort(),
    );
    expect(values(fence, 'StringNotLike', 'aws:PrincipalArn')).not.toContain(
      `<${logicalId(stack, distributor.role as never)}.Arn>`,
    );
  });
});

describe('request-time recipients: recipientAccounts', () => {
  it('GIVEN recipientAccounts WHEN synthesized THEN every function gets FANIN_RECIPIENT_ACCOUNTS as a JSON array', () => {
    // Mutant killed: "recipientAccounts not passed to the handlers".
    const synth = synthFanin({ recipientAccounts: ['444455556666', '777788889999'] });
    for (const fn of functionsOf(synth)) {
      expect(JSON.parse(String(variables(fn)[ConfigEnv.RECIPIENT_ACCOUNTS]))).toEqual([
        '444455556666',
        '777788889999',
      ]);
    }
    for (const fn of functionsOf(synthFanin())) {
      expect(variables(fn)[ConfigEnv.RECIPIENT_ACCOUNTS]).toBeUndefined();
    }
  });

  it("GIVEN an extra target pattern that matches one of fanin's own queues WHEN the construct is created THEN it throws naming them", () => {
    // Mutant killed: "no check of extra targets against the topology's queue names": a request naming
    // `fanin-out-completed.fifo` as a recipient would forge a result with the fan-out's own role.
    expect(construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-*'] })).toThrow(
      /extraTargetQueueArns must not match fanin's own queues \(fanin-ingress, .*fanin-out-completed\.fifo.*\(given arn:aws:sqs:us-east-1:111122223333:fanin-\*\)/,
    );
    expect(construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-timer'] })).toThrow(
      /\(fanin-timer\)/,
    );
    expect(
      construct({ extraTargetQueueArns: ['arn:aws:sqs:us-east-1:111122223333:fanin-bank-?'] }),
    ).not.toThrow();
    // the same names in a recipient account are another account's queues
    expect(
      construct({
        extraTargetQueueArns: ['arn:aws:sqs:us-east-1:444455556666:fanin-*'],
        recipientAccounts: ['444455556666'],
      }),
    ).not.toThrow();
  });

  it('GIVEN a recipient account that is not 12 digits WHEN the construct is created THEN it throws naming it', () => {
    expect(construct({ recipientAccounts: ['444455556666', '4444-5555-6666'] })).toThrow(
      /recipientAccounts must be 12-digit AWS account ids, known at synth \(given \["4444-5555-6666"\]\)/,
    );
  });

  it('GIVEN a stack in a known account and region WHEN an extra target queue is in another account or region THEN the construct throws unless that account is a recipient account', () => {
    // Mutant killed: "extraTargetQueueArns unchecked against recipientAccounts": the fan-out's IAM
    // would allow queues the runtime refuses (or the reverse).
    const make = (props: Partial<FaninProps>) => () =>
      new Fanin(
        new Stack(testApp(), 'Test', { env: { account: '111122223333', region: 'eu-west-1' } }),
        'Fanin',
        { definitions: DEFINITIONS, ...props },
      );
    const partner = 'arn:aws:sqs:eu-west-1:444455556666:partner-*';
    expect(make({ extraTargetQueueArns: [partner] })).toThrow(
      /extraTargetQueueArns must name queues of fanin's own account \(111122223333\) or of recipientAccounts, in fanin's region \(eu-west-1\) \(given arn:aws:sqs:eu-west-1:444455556666:partner-\*\)/,
    );
    expect(make({ extraTargetQueueArns: [partner], recipientAccounts: ['444455556666'] })).not.toThrow();
    expect(make({ extraTargetQueueArns: ['arn:aws:sqs:eu-west-1:111122223333:mine-*'] })).not.toThrow();
    expect(
      make({
        extraTargetQueueArns: ['arn:aws:sqs:us-east-1:444455556666:x'],
        recipientAccounts: ['444455556666'],
      }),
    ).toThrow(/\(given arn:aws:sqs:us-east-1:444455556666:x\)/);
  });
});

describe('the alarms the use cases raise', () => {
  let synth: Synth;
  beforeAll(() => {
    synth = synthFanin({ prefix: 'shop' });
  });

  it.each(Object.values(Alarm))(
    'GIVEN the handlers log alarm "%s" WHEN synthesized THEN every handler log group has a metric filter on it into namespace fanin',
    (value) => {
      // Mutant killed: "no metric filter for this alarm value" (329f56a had none).
      const { stack, fanin, template } = synth;
      const filters = Object.values(
        template.findResources('AWS::Logs::MetricFilter', {
          Properties: { FilterPattern: `{ $.alarm = "${value}" }` },
        }),
      ) as Resource[];
      const groups = filters.map((f) => render(f.Properties.LogGroupName));
      expect(groups.sort()).toEqual(
        Object.values(fanin.functions)
          .map((fn) => `<${logicalId(stack, fn.logGroup as never)}>`)
          .sort(),
      );
      for (const filter of filters) {
        expect(filter.Properties.MetricTransformations).toEqual([
          { MetricNamespace: ALARM_NAMESPACE, MetricName: `shop-${value}`, MetricValue: '1' },
        ]);
      }
    },
  );

  it.each(Object.values(Alarm))(
    'GIVEN alarm "%s" WHEN synthesized THEN a CloudWatch alarm fires on one occurrence in 5 minutes',
    (value) => {
      // Mutant killed: "metric without an alarm", "threshold above 1".
      const { fanin, template } = synth;
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `shop-${value}`,
        Namespace: ALARM_NAMESPACE,
        MetricName: `shop-${value}`,
        Statistic: 'Sum',
        Period: 300,
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(fanin.alarms).toContain(fanin.useCaseAlarms[value]);
    },
  );

  it('GIVEN any DLQ WHEN synthesized THEN an alarm fires as soon as it holds a visible message', () => {
    const { stack, fanin, template } = synth;
    for (const queue of [...Object.values(fanin.queues), ...fanin.replyPartitions]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          {
            Name: 'QueueName',
            Value: { 'Fn::GetAtt': [logicalId(stack, queue.deadLetterQueue), 'QueueName'] },
          },
        ],
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
      });
    }
  });
});

describe('FIFO queues in high-throughput mode', () => {
  it('GIVEN the defaults WHEN synthesized THEN every FIFO queue deduplicates and throttles per message group', () => {
    // GIVEN / WHEN
    const { template } = synthFanin({ fifoReplies: true });
    // THEN (mutant killed: FIFO queues left in their default mode, about 300 messages per second)
    const fifos = Object.values(template.findResources('AWS::SQS::Queue')).filter(
      (queue) => queue.Properties?.FifoQueue === true,
    );
    expect(fifos.length).toBeGreaterThan(0);
    for (const queue of fifos) {
      expect(queue.Properties).toMatchObject({
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      });
    }
  });
});
