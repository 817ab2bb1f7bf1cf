import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { Fanin } from '../../../infra/fanin.ts';
import { FaninStack, prefixOfStackName } from '../../../infra/fanin-stack.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { DEFINITIONS, logicalId, testApp } from './synth.ts';

/** A synth takes a few seconds on a loaded machine; no assertion is timed. */
const SYNTH_TIMEOUT = 120_000;

/**
 * The property holding the physical name of each resource type whose name is unique in an account
 * and region (or globally): two resources of one type and one name cannot both be deployed.
 */
const NAMED: Readonly<Record<string, string>> = {
  'AWS::SQS::Queue': 'QueueName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::CloudWatch::Dashboard': 'DashboardName',
  'AWS::Events::EventBus': 'Name',
  'AWS::Events::Rule': 'Name',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::S3::Bucket': 'BucketName',
};

/** Resource types without a name of their own in the account (named within their parent, or not at all). */
const UNNAMED = new Set([
  'AWS::SQS::QueuePolicy',
  'AWS::S3::BucketPolicy',
  'AWS::IAM::Policy',
  'AWS::Lambda::Permission',
  'AWS::Lambda::EventSourceMapping',
  'AWS::Lambda::EventInvokeConfig',
  'AWS::Logs::MetricFilter',
  'AWS::Events::EventBusPolicy',
  'AWS::CDK::Metadata',
]);

/** Every physical name set in the templates, as `type name`, and the resource types seen. */
function physicalNames(templates: readonly Template[]): { names: string[]; types: Set<string> } {
  const names: string[] = [];
  const types = new Set<string>();
  for (const template of templates) {
    const resources = template.toJSON().Resources as Record<
      string,
      { Type: string; Properties?: Record<string, unknown> }
    >;
    for (const resource of Object.values(resources)) {
      types.add(resource.Type);
      const property = NAMED[resource.Type];
      const value = property ? resource.Properties?.[property] : undefined;
      // A name with a deploy-time part (the dashboard's region) is compared as its expression.
      if (value !== undefined) names.push(`${resource.Type} ${JSON.stringify(value)}`);
    }
  }
  return { names, types };
}

/** The metrics the use cases' alarms count, as `namespace/name`, over the templates. */
function filterMetrics(templates: readonly Template[]): Set<string>[] {
  return templates.map(
    (template) =>
      new Set(
        Object.values(template.findResources('AWS::Logs::MetricFilter')).flatMap((filter) =>
          (filter.Properties.MetricTransformations as { MetricNamespace: string; MetricName: string }[]).map(
            (t) => `${t.MetricNamespace}/${t.MetricName}`,
          ),
        ),
      ),
  );
}

function duplicates(values: readonly string[]): string[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    if (seen.has(value)) return true;
    seen.add(value);
    return false;
  });
}

describe('two fanin stacks in one account', { timeout: SYNTH_TIMEOUT }, () => {
  it.each([
    ['the example stacks with their defaults', {}],
    ['the example stacks with an output bus', { fanin: { createEventBus: true } }],
  ])('%s share no physical name of any named resource type', (_name, props) => {
    // GIVEN one app with the example stack Fanin and a second one, FaninDev, in one account and region
    const app = testApp();
    const env = { account: '123456789012', region: 'eu-west-1' };
    const prod = new FaninStack(app, 'Fanin', { env, ...props });
    const dev = new FaninStack(app, 'FaninDev', { env, ...props });
    // WHEN both are synthesized
    const templates = [Template.fromStack(prod), Template.fromStack(dev)];
    const { names, types } = physicalNames(templates);
    // THEN every resource type is known to be named or not, and no name is in both stacks
    expect([...types].filter((t) => !(t in NAMED) && !UNNAMED.has(t))).toEqual([]);
    expect(names.length).toBeGreaterThan(80);
    expect(duplicates(names)).toEqual([]);
    // AND the named types include each kind the issue lists: queues, the table, alarms, the dashboard
    for (const type of [
      'AWS::SQS::Queue',
      'AWS::DynamoDB::Table',
      'AWS::CloudWatch::Alarm',
      'AWS::CloudWatch::Dashboard',
    ]) {
      expect(names.filter((n) => n.startsWith(`${type} `)).length, type).toBeGreaterThan(0);
    }
    if ('fanin' in props) expect(names.filter((n) => n.startsWith('AWS::Events::EventBus ')).length).toBe(2);
    // AND the use cases' alarm metrics are each stack's own
    const [a, b] = filterMetrics(templates);
    expect([...(a ?? [])].filter((m) => b?.has(m))).toEqual([]);
  });

  it('the stack Fanin keeps the names a deployed default stack has (fanin-*), so nothing is replaced', () => {
    // GIVEN the example stack as `npx cdk deploy` creates it WHEN synthesized
    const template = Template.fromStack(new FaninStack(testApp(), 'Fanin'));
    // THEN its queues, table and alarms are named after the prefix fanin, as before
    const queues = Object.values(template.findResources('AWS::SQS::Queue')).map(
      (q) => q.Properties.QueueName,
    );
    expect(queues).toEqual(
      expect.arrayContaining(['fanin-ingress', 'fanin-reply-0', 'fanin-out-completed.fifo']),
    );
    for (const name of queues) expect(name).toMatch(/^fanin-/);
    template.hasResourceProperties('AWS::DynamoDB::Table', { TableName: 'fanin-state' });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'fanin-reply-errors' });
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', ['fanin-fanin-', { Ref: 'AWS::Region' }]] },
    });
  });

  it("a stack's prefix is its name in lower case unless given; a name that gives none says to pass one", () => {
    expect(prefixOfStackName('Fanin')).toBe('fanin');
    expect(prefixOfStackName('FaninDev')).toBe('fanindev');
    expect(new FaninStack(testApp(), 'Shop-Orders').fanin.topology.prefix).toBe('shop-orders');
    expect(new FaninStack(testApp(), 'FaninDev', { prefix: 'dev' }).fanin.topology.prefix).toBe('dev');
    expect(() => prefixOfStackName('A'.repeat(32))).toThrow(
      `stack name "${'A'.repeat(32)}" gives no fanin prefix (in lower case, a letter then up to 30 letters, digits or dashes): pass the prefix prop (-c fanin:prefix=<prefix>)`,
    );
  });

  it('two instances of one prefix in one account and region fail at synth, naming both', () => {
    // GIVEN one app whose two stacks of one account and region each hold a Fanin of prefix shop
    const app = testApp();
    const env = { account: '123456789012', region: 'eu-west-1' };
    new Fanin(new Stack(app, 'A', { env }), 'Fanin', { prefix: 'shop', definitions: DEFINITIONS });
    const second = () =>
      new Fanin(new Stack(app, 'B', { env }), 'Fanin', { prefix: 'shop', definitions: DEFINITIONS });
    // THEN the second fails, naming the first
    expect(second).toThrow(
      'fanin instance B/Fanin has prefix "shop", as A/Fanin has: its queues, table, alarms and dashboard would have the same names (shop-*) in the same account and region',
    );
  });

  it('two instances of one prefix in one stack fail; in other regions they may; environment-agnostic stacks are warned', () => {
    const app = testApp();
    const stack = new Stack(app, 'One');
    new Fanin(stack, 'First', { prefix: 'shop', definitions: DEFINITIONS });
    expect(() => new Fanin(stack, 'Second', { prefix: 'shop', definitions: DEFINITIONS })).toThrow(
      'fanin instance One/Second has prefix "shop", as One/First has',
    );
    // Other regions: no collision, no warning
    const regions = testApp();
    for (const region of ['eu-west-1', 'us-east-1']) {
      new Fanin(new Stack(regions, `In-${region}`, { env: { account: '123456789012', region } }), 'Fanin', {
        prefix: 'shop',
        definitions: DEFINITIONS,
      });
    }
    // Environment-agnostic stacks may be deployed anywhere: a warning
    const agnostic = testApp();
    new Fanin(new Stack(agnostic, 'X'), 'Fanin', { prefix: 'shop', definitions: DEFINITIONS });
    const y = new Stack(agnostic, 'Y');
    new Fanin(y, 'Fanin', { prefix: 'shop', definitions: DEFINITIONS });
    Annotations.fromStack(y).hasWarning('/Y/Fanin', Match.stringLikeRegexp('as X/Fanin has'));
  });
});

describe('stack outputs', { timeout: SYNTH_TIMEOUT }, () => {
  it('name every queue, each reply partition, the table, the bucket, the bus and the prefix, keyed by the construct', () => {
    // GIVEN a stack with a Fanin of 3 reply partitions and an output bus WHEN synthesized
    const stack = new Stack(testApp(), 'Test');
    const fanin = new Fanin(stack, 'Fanin', {
      prefix: 'shop',
      definitions: DEFINITIONS,
      replyPartitions: 3,
      createEventBus: true,
    });
    const template = Template.fromStack(stack);
    const ref = (construct: { node: { defaultChild?: unknown } }) => ({ Ref: logicalId(stack, construct) });
    // THEN the outputs hold what a producer, a responder, an output consumer and the CLI look for
    template.hasOutput('FaninPrefix', { Value: 'shop' });
    template.hasOutput('FaninIngressQueueUrl', { Value: ref(fanin.queues[QueueRole.INGRESS].queue) });
    template.hasOutput('FaninControlQueueUrl', { Value: ref(fanin.queues[QueueRole.CONTROL].queue) });
    template.hasOutput('FaninCompletedQueueUrl', { Value: ref(fanin.queues[QueueRole.COMPLETED].queue) });
    template.hasOutput('FaninTimedOutQueueUrl', { Value: ref(fanin.queues[QueueRole.TIMED_OUT].queue) });
    template.hasOutput('FaninLateQueueUrl', { Value: ref(fanin.queues[QueueRole.LATE].queue) });
    template.hasOutput('FaninErrorQueueUrl', { Value: ref(fanin.queues[QueueRole.ERROR].queue) });
    fanin.replyPartitions.forEach((partition, i) => {
      template.hasOutput(`FaninReplyQueue${i}Url`, { Value: ref(partition.queue) });
    });
    template.hasOutput('FaninReplyPartitions', { Value: '3' });
    template.hasOutput('FaninStateTableName', { Value: ref(fanin.table as never) });
    template.hasOutput('FaninPayloadBucketName', { Value: ref(fanin.bucket as never) });
    template.hasOutput('FaninOutputBusName', { Value: ref(fanin.eventBus as never) });
    // AND there is one output per queue role, partition and resource, no more
    const keys = Object.keys(template.findOutputs('*'));
    expect(keys).toHaveLength(1 + Object.values(QueueRole).length + 3 + 1 + 3);
    expect(Object.keys(fanin.outputs)).toHaveLength(keys.length);
  });

  it("two instances in one stack have their own keys: each construct's path", () => {
    const stack = new Stack(testApp(), 'Test');
    new Fanin(stack, 'Orders', { prefix: 'orders', definitions: DEFINITIONS });
    new Fanin(stack, 'Quotes', { prefix: 'quotes', definitions: DEFINITIONS });
    const template = Template.fromStack(stack);
    template.hasOutput('OrdersPrefix', { Value: 'orders' });
    template.hasOutput('QuotesPrefix', { Value: 'quotes' });
  });
});
