import { Duration, Fn, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import { describe, expect, it } from 'vitest';
import { Fanin, type FaninProps } from '../../../infra/fanin.ts';
import {
  LAMBDA_ENV_LIMIT_BYTES,
  LONGEST_QUEUE_URL_PREFIX,
  worstCaseEnvironment,
} from '../../../infra/handler-environment.ts';
import { construct, DEFINITIONS, testApp } from './synth.ts';

/**
 * The 4 KB check is only useful if it is an upper bound of what is deployed: these tests render
 * the synthesized environment with the values CloudFormation would return in the longest region
 * and compare it, variable by variable, with the bound the check uses.
 */

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

/** GIVEN a Fanin in a stack in cn-northwest-1 (the longest queue URLs) WHEN synthesized. */
function deployed(props: Partial<FaninProps>): { fanin: Fanin; template: Template; stack: Stack } {
  const stack = new Stack(testApp(), 'Test', { env: { account: '123456789012', region: 'cn-northwest-1' } });
  const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, ...props });
  return { fanin, stack, template: Template.fromStack(stack) };
}

/** What a resolved value becomes at deploy: a Ref is the queue's URL, the table's or bus's name, a 63-character bucket name. */
function deployValue(value: unknown, resources: Resources): string {
  if (typeof value === 'string') return value;
  const v = value as Record<string, unknown>;
  if ('Ref' in v) {
    const resource = resources[String(v.Ref)];
    switch (resource?.Type) {
      case 'AWS::SQS::Queue':
        return `https://sqs.cn-northwest-1.amazonaws.com.cn/123456789012/${String(resource.Properties.QueueName)}`;
      case 'AWS::DynamoDB::Table':
        return String(resource.Properties.TableName);
      case 'AWS::S3::Bucket':
        return 'b'.repeat(63);
      case 'AWS::Events::EventBus':
        return String(resource.Properties.Name);
    }
    throw new Error(`no deploy value for Ref ${String(v.Ref)}`);
  }
  if ('Fn::Join' in v) {
    const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => deployValue(part, resources)).join(separator);
  }
  throw new Error(`no deploy value for ${JSON.stringify(value)}`);
}

/** Every handler's environment as deployed. */
function deployedEnvironments(template: Template): Record<string, string>[] {
  const resources = template.toJSON().Resources as Resources;
  return Object.values(template.findResources('AWS::Lambda::Function')).map((fn) => {
    const variables = (fn.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment
      .Variables;
    return Object.fromEntries(
      Object.entries(variables).map(([name, value]) => [name, deployValue(value, resources)]),
    );
  });
}

describe("the handlers' 4 KB environment check", () => {
  it.each<[string, Partial<FaninProps>]>([
    ['the defaults', {}],
    ['an output bus and a claim-check threshold', { createEventBus: true, claimCheckThreshold: 1000 }],
    ['FIFO replies and a long prefix', { fifoReplies: true, prefix: 'a-rather-long-prefix-for-fanin' }],
    [
      'the most partitions the default prefix allows with a bus',
      { replyPartitions: 36, createEventBus: true },
    ],
    [
      'recipient accounts and the longest lease',
      { recipientAccounts: ['111122223333', '444455556666'], functionTimeout: Duration.seconds(900) },
    ],
  ])('bounds every variable of the deployed environment with %s', (_, props) => {
    const { fanin, stack } = deployed(props);
    const template = Template.fromStack(stack);
    const bound = worstCaseEnvironment(fanin.topology, {
      ...(fanin.eventBus ? { eventBusName: fanin.eventBus.eventBusName } : {}),
      ...(props.claimCheckThreshold !== undefined
        ? { claimCheckThresholdBytes: props.claimCheckThreshold }
        : {}),
      ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
    });
    for (const environment of deployedEnvironments(template)) {
      // THEN the check counts the same variables, each at least as long as deployed
      expect(Object.keys(environment).sort()).toEqual(Object.keys(bound).sort());
      for (const [name, value] of Object.entries(environment)) {
        expect(Buffer.byteLength(value), name).toBeLessThanOrEqual(Buffer.byteLength(bound[name] ?? ''));
      }
      expect(Buffer.byteLength(JSON.stringify(environment))).toBeLessThanOrEqual(LAMBDA_ENV_LIMIT_BYTES);
    }
  });

  it('assumes the longest queue URL of the targeted partitions', () => {
    const { fanin, template } = deployed({});
    const url = deployedEnvironments(template)[0]?.FANIN_REPLY_QUEUES ?? '';
    expect(JSON.parse(url)[0]).toBe(`${LONGEST_QUEUE_URL_PREFIX}${fanin.topology.replyPartitions[0]?.name}`);
  });

  it('fails when recipient accounts leave no room, naming them', () => {
    // GIVEN 37 partitions, which fit, WHEN a recipient account is added THEN the bound counts it
    expect(construct({ replyPartitions: 37 })).not.toThrow();
    expect(construct({ replyPartitions: 37, recipientAccounts: ['111122223333'] })).toThrow(
      /over Lambda's 4096-byte limit: .*fewer recipientAccounts \(given 1 recipient accounts\)/,
    );
  });

  it('accepts 37 partitions with the default prefix and fails at 38, naming the size', () => {
    // GIVEN the default prefix WHEN the partition count crosses what fits THEN the construct says so
    expect(construct({ replyPartitions: 37 })).not.toThrow();
    expect(construct({ replyPartitions: 38 })).toThrow(
      /replyPartitions 38 with prefix "fanin" makes the handlers' environment up to 41\d\d bytes, over Lambda's 4096-byte limit/,
    );
  });

  it('fails if an imported bus, whose name is unknown at synth, leaves no room', () => {
    // GIVEN a bus imported by a deploy-time name: the check assumes EventBridge's longest name
    const bus = events.EventBus.fromEventBusName(new Stack(), 'Bus', Fn.importValue('shared-bus-name'));
    expect(construct({ replyPartitions: 33, eventBus: bus })).not.toThrow();
    expect(construct({ replyPartitions: 34, eventBus: bus })).toThrow(/over Lambda's 4096-byte limit/);
  });
});
