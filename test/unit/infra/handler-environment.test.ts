import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Duration, Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import { Fanin, type FaninProps } from '../../../infra/fanin.ts';
import {
  ENV_BUDGET_BYTES,
  ENV_MARGIN_BYTES,
  environmentSizeBound,
  LAMBDA_ENV_LIMIT_BYTES,
  LONGEST_QUEUE_URL_PREFIX,
  QUEUE_URL_PREFIXES,
  worstCaseEnvironment,
} from '../../../infra/handler-environment.ts';
import { createContext } from '../../../shared/app.ts';
import { ConfigEnv, configToEnv, loadConfig } from '../../../shared/config.ts';
import { describeTopology, QueueRole } from '../../../shared/topology/topology.ts';
import { construct, DEFINITIONS, functionsOf, logicalId, synthFanin, testApp, variables } from './synth.ts';

/**
 * The 4 KB check is only useful if it is an upper bound of what is deployed: these tests render
 * the synthesized environment with the values CloudFormation would return in the longest region,
 * on AWS and on LocalStack, and compare it, variable by variable, with the bound the check uses.
 */

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** GIVEN a Fanin in a stack in cn-northwest-1 (the longest region name) WHEN synthesized. */
function deployed(props: Partial<FaninProps>): { fanin: Fanin; template: Template; stack: Stack } {
  const stack = new Stack(testApp(), 'Test', { env: { account: '123456789012', region: 'cn-northwest-1' } });
  const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, ...props });
  return { fanin, stack, template: Template.fromStack(stack) };
}

/** The two forms a deployed queue URL takes in cn-northwest-1: AWS's and LocalStack's (the longer). */
const DEPLOYED_URL = {
  aws: (name: string) => `https://sqs.cn-northwest-1.amazonaws.com.cn/123456789012/${name}`,
  localstack: (name: string) =>
    `http://sqs.cn-northwest-1.localhost.localstack.cloud:4566/123456789012/${name}`,
} as const;
type UrlForm = keyof typeof DEPLOYED_URL;

/** What a resolved value becomes at deploy: a Ref is the queue's URL, the table's or bus's name, a 63-character bucket name. */
function deployValue(value: unknown, resources: Resources, form: UrlForm): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if ('Ref' in v) {
    const resource = resources[String(v.Ref)];
    switch (resource?.Type) {
      case 'AWS::SQS::Queue':
        return DEPLOYED_URL[form](String(resource.Properties.QueueName));
      case 'AWS::DynamoDB::Table':
        return String(resource.Properties.TableName);
      case 'AWS::S3::Bucket':
        return 'b'.repeat(63);
      case 'AWS::Events::EventBus':
        return String(resource.Properties.Name);
    }
    throw new Error(`no deploy value for Ref ${String(v.Ref)}`);
  }
  // The distributor role's unique id (FANIN_TRUSTED_MOVERS), as AWS generates one: AROA and 17 more.
  if ('Fn::GetAtt' in v && (v['Fn::GetAtt'] as string[])[1] === 'RoleId') return `AROA${'X'.repeat(17)}`;
  if ('Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => deployValue(part, resources, form)).join(separator);
  }
  throw new Error(`no deploy value for ${JSON.stringify(value)}`);
}

/** Every handler's environment as deployed, with queue URLs of this form. */
function deployedEnvironments(template: Template, form: UrlForm): Record<string, string>[] {
  const resources = template.toJSON().Resources as Resources;
  return Object.values(template.findResources('AWS::Lambda::Function')).map((fn) => {
    const variables = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment
      .Variables;
    return Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, deployValue(value, resources, form)]),
    );
  });
}

/** The bound the construct checks, for a Fanin built with these props. */
function boundOf(fanin: Fanin, props: Partial<FaninProps>): Record<string, string> {
  return worstCaseEnvironment(fanin.topology, {
    ...(fanin.eventBus ? { eventBusName: fanin.eventBus.eventBusName } : {}),
    ...(props.claimCheckThreshold !== undefined
      ? { claimCheckThresholdBytes: props.claimCheckThreshold }
      : {}),
    ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
    ...(props.tracing ? { tracing: true } : {}),
  });
}

describe("the handlers' 4 KB environment check", () => {
  it.each<[string, Partial<FaninProps>]>([
    ['the defaults', {}],
    ['an output bus and a claim-check threshold', { createEventBus: true, claimCheckThreshold: 1000 }],
    ['FIFO replies and a long prefix', { fifoReplies: true, prefix: 'a-rather-long-prefix-for-fanin' }],
    [
      'the most partitions the default prefix allows with a bus',
      { replyPartitions: 25, createEventBus: true },
    ],
    ['tracing on', { tracing: true }],
    [
      'recipient accounts and the longest lease',
      { recipientAccounts: ['111122223333', '444455556666'], functionTimeout: Duration.seconds(900) },
    ],
  ])('bounds every variable of the deployed environment, on AWS and on LocalStack, with %s', (_, props) => {
    const { fanin, stack } = deployed(props);
    const template = Template.fromStack(stack);
    const bound = boundOf(fanin, props);
    for (const form of ['aws', 'localstack'] as const) {
      for (const environment of deployedEnvironments(template, form)) {
        // THEN the check counts the same variables, each at least as long as deployed
        expect(Object.keys(environment).sort()).toEqual(Object.keys(bound).sort());
        for (const [name, value] of Object.entries(environment)) {
          expect(Buffer.byteLength(value), `${form} ${name}`).toBeLessThanOrEqual(
            Buffer.byteLength(bound[name] ?? ''),
          );
        }
        expect(Buffer.byteLength(JSON.stringify(environment))).toBeLessThanOrEqual(ENV_BUDGET_BYTES);
      }
    }
  });

  it("assumes LocalStack's queue URLs, the longest form a handler can be given", () => {
    // (mutant killed: the AWS form only, which LocalStack's URLs outgrow by 14 bytes each)
    expect(LONGEST_QUEUE_URL_PREFIX).toBe(QUEUE_URL_PREFIXES.localstack);
    expect(QUEUE_URL_PREFIXES.localstack.length).toBeGreaterThan(QUEUE_URL_PREFIXES.aws.length);
    const { fanin } = deployed({});
    const bound = boundOf(fanin, {});
    expect(JSON.parse(bound.FANIN_REPLY_QUEUES ?? '[]')[0]).toBe(
      DEPLOYED_URL.localstack(fanin.topology.replyPartitions[0]?.name ?? ''),
    );
  });

  it('accepts 25 partitions with the default prefix and fails at 26, naming the size and the count that fits', () => {
    // GIVEN the default prefix WHEN the partition count crosses what fits THEN the construct says so
    expect(construct({ replyPartitions: 25 })).not.toThrow();
    expect(construct({ replyPartitions: 26 })).toThrow(
      /replyPartitions 26 with prefix "fanin" makes the handlers' environment up to 3\d\d\d bytes .*over the 3840 bytes allowed \(Lambda's 4096-byte limit less a 256-byte margin\): at most 25 reply partitions fit/,
    );
  });

  it('keeps the margin: 26 partitions fit 4096 bytes but not the 3840 allowed', () => {
    // (mutant killed: the check against 4096 bytes, without a margin)
    const { fanin } = deployed({});
    const at26 = environmentSizeBound(describeTopology({ definitions: DEFINITIONS, replyPartitions: 26 }), {
      serviceName: fanin.topology.prefix,
    });
    expect(at26).toBeGreaterThan(ENV_BUDGET_BYTES);
    expect(at26).toBeLessThanOrEqual(LAMBDA_ENV_LIMIT_BYTES);
    expect(ENV_BUDGET_BYTES).toBe(LAMBDA_ENV_LIMIT_BYTES - ENV_MARGIN_BYTES);
  });

  it('fails when recipient accounts leave no room, naming them and the count that fits', () => {
    // GIVEN 25 partitions, which fit, WHEN recipient accounts are added THEN the bound counts them
    const accounts = ['111122223333', '222233334444', '333344445555', '444455556666', '555566667777'];
    expect(construct({ replyPartitions: 25 })).not.toThrow();
    expect(construct({ replyPartitions: 25, recipientAccounts: accounts })).toThrow(
      /over the 3840 bytes allowed .*at most 2[0-5] reply partitions fit .*fewer recipientAccounts \(given 5 recipient accounts\)/,
    );
  });

  it('says when not even one partition fits', () => {
    const accounts = Array.from({ length: 200 }, (_, i) => String(100000000000 + i));
    expect(construct({ replyPartitions: 1, recipientAccounts: accounts })).toThrow(
      /not even one reply partition fits with this prefix and these options/,
    );
  });

  it('fails if an imported bus, whose name is unknown at synth, leaves no room', () => {
    // GIVEN a bus imported by a deploy-time name: the check assumes EventBridge's longest name
    const bus = events.EventBus.fromEventBusName(new Stack(), 'Bus', Fn.importValue('shared-bus-name'));
    expect(construct({ replyPartitions: 22, eventBus: bus })).not.toThrow();
    expect(construct({ replyPartitions: 23, eventBus: bus })).toThrow(/at most 22 reply partitions fit/);
  });

  it('counts a table given by a deploy-time name as the longest table name', () => {
    const table = dynamodb.Table.fromTableName(new Stack(), 'Table', Fn.importValue('shared-table-name'));
    // 255 characters instead of 11 ("fanin-state"): two or three partitions fewer
    expect(construct({ replyPartitions: 23, table })).not.toThrow();
    expect(construct({ replyPartitions: 26, table })).toThrow(/at most 2[0-3] reply partitions fit/);
  });
});

/**
 * Who may date a moved reply (docs/security.md, "Who may date a reply"): the stack names the
 * distributor's role, by its unique id (the `SenderId` SQS gives the copies it sends, as
 * `<role id>:<session>`), in every handler's `FANIN_TRUSTED_MOVERS`, and no other role; the
 * handlers read it back into their configuration.
 */
describe("the handlers' trusted movers", () => {
  it("name the distributor role's RoleId in the reply and distributor functions, and no other role", () => {
    // GIVEN a synthesized Fanin
    const { stack, fanin, template } = synthFanin();
    const distributorRole = logicalId(stack, fanin.functions.distributor.executionRole);
    const resources = template.toJSON().Resources as Record<
      string,
      { Properties: { Environment?: { Variables: Record<string, unknown> } } }
    >;
    const moversOf = (fn: { node: { defaultChild?: unknown } }) =>
      resources[logicalId(stack, fn)]?.Properties.Environment?.Variables[ConfigEnv.TRUSTED_MOVERS];

    // THEN the reply function (which judges a reply's arrival) and the distributor (which keeps a
    // moved copy's first send time when it moves it again) trust the distributor's role id alone
    // (mutant killed: the reply function's role named instead of the distributor's)
    const expected = { 'Fn::Join': ['', ['["', { 'Fn::GetAtt': [distributorRole, 'RoleId'] }, '"]']] };
    expect(moversOf(fanin.functions.reply)).toEqual(expected);
    expect(moversOf(fanin.functions.distributor)).toEqual(expected);
    // AND every handler carries the same value (one environment)
    for (const fn of Object.values(fanin.functions)) expect(moversOf(fn)).toEqual(expected);
  });

  it('are read back from the environment the stack sets; unset trusts nobody; a malformed one is a configuration error', () => {
    const queueUrls = Object.fromEntries(
      Object.values(QueueRole).map((r) => [r, `https://q/${r}`]),
    ) as Record<QueueRole, string>;
    const base = { tableName: 't', queueUrls, replyQueueUrls: ['https://q/r0'], definitions: [] };
    // (mutant killed: the variable not read into the configuration)
    expect(
      loadConfig(configToEnv({ ...base, trustedMovers: ['AROAEXAMPLEROLEID0001'] })).trustedMovers,
    ).toEqual(['AROAEXAMPLEROLEID0001']);
    expect(loadConfig(configToEnv(base)).trustedMovers).toBeUndefined();
    // AND the handlers' context, which judges a reply's arrival, takes them from the configuration
    const clients = {
      sqs: new SQSClient({ region: 'us-east-1' }),
      dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
    };
    const config = loadConfig(configToEnv({ ...base, trustedMovers: ['AROAEXAMPLEROLEID0001'] }));
    expect(createContext(config, clients).trustedMovers).toEqual(['AROAEXAMPLEROLEID0001']);
    expect(createContext(loadConfig(configToEnv(base)), clients).trustedMovers).toBeUndefined();
    expect(() => loadConfig({ ...configToEnv(base), [ConfigEnv.TRUSTED_MOVERS]: '["a b"]' })).toThrow(
      /FANIN_TRUSTED_MOVERS must be a JSON array of SQS sender ids/,
    );
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

describe('request-time recipients reach every handler', () => {
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
});
