import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { Fanin, type FaninProps } from '../../../infra/fanin.ts';
import type { DefinitionInput } from '../../../shared/engine/definition.ts';
import type { Topology } from '../../../shared/topology/topology.ts';

/**
 * Stack-test helpers. Apps get the context of cdk.json (the feature flags the real app runs with),
 * skip asset bundling (no esbuild run, no network, milliseconds per stack) and skip CDK's built-in
 * CloudFormation validation (cfn-lint covers the real template in CI).
 */

const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../../cdk.json', import.meta.url), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

/** A new app configured like `cdk synth`, minus bundling. */
export function testApp(): App {
  return new App({
    context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] },
    builtinCloudFormationValidation: false,
  });
}

/** A small definition set that exercises each wiring: a recipient list, a splitter, an external event. */
export const DEFINITIONS: DefinitionInput[] = [
  {
    name: 'quotes',
    completion: { strategy: 'all' },
    fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] },
  },
  {
    name: 'order',
    completion: { strategy: 'all' },
    fanOut: {
      type: 'splitter',
      itemsPath: '$.items',
      target: 'https://sqs.eu-west-1.amazonaws.com/111122223333/warehouse',
    },
  },
  {
    name: 'approval',
    completion: { strategy: 'external' },
    externalEventPattern: { source: ['shop.orders'], 'detail-type': ['OrderApproved'] },
  },
];

/** A synthesized stack holding one Fanin. */
export interface Synth {
  readonly stack: Stack;
  readonly fanin: Fanin;
  readonly template: Template;
}

/** GIVEN a stack with a Fanin of these props WHEN it is synthesized. */
export function synthFanin(props: Partial<FaninProps> = {}): Synth {
  const app = testApp();
  const stack = new Stack(app, 'Test');
  const fanin = new Fanin(stack, 'Fanin', { definitions: DEFINITIONS, ...props });
  return { stack, fanin, template: Template.fromStack(stack) };
}

/** The props a construct that must throw is given: validated at construction, nothing synthesized. */
export function construct(props: Partial<FaninProps>): () => Fanin {
  return () => new Fanin(new Stack(testApp(), 'Test'), 'Fanin', { definitions: DEFINITIONS, ...props });
}

/** The logical id of a construct's CloudFormation resource. */
export function logicalId(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  const child = construct.node.defaultChild as { logicalId: string } | undefined;
  if (!child) throw new Error('construct has no default child');
  return stack.resolve(child.logicalId) as string;
}

/**
 * Renders a resolved CloudFormation value as a string: `<Id>` for a Ref, `<Id.Attr>` for a
 * GetAtt, joins concatenated. Lets IAM resources be compared as plain strings.
 */
export function render(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, unknown>;
    if ('Ref' in v) return `<${String(v.Ref)}>`;
    if ('Fn::GetAtt' in v) return `<${(v['Fn::GetAtt'] as string[]).join('.')}>`;
    if ('Fn::Join' in v) {
      const [sep, parts] = v['Fn::Join'] as [string, unknown[]];
      return parts.map(render).join(sep);
    }
  }
  return JSON.stringify(value);
}

/**
 * Every `action -> resources` a role's identity policies allow (statements merged or not). A
 * resource allowed only under a condition is written `<resource> if <condition JSON>`, so a
 * conditional grant never passes for an unconditional one, nor the other way round.
 */
export function allowedActions(template: Template, roleLogicalId: string): Map<string, Set<string>> {
  const allowed = new Map<string, Set<string>>();
  const policies = {
    ...template.findResources('AWS::IAM::Policy'),
    ...template.findResources('AWS::IAM::ManagedPolicy'),
  };
  for (const policy of Object.values(policies)) {
    const props = policy.Properties as {
      Roles?: unknown[];
      PolicyDocument: {
        Statement: { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown }[];
      };
    };
    if (!(props.Roles ?? []).some((r) => render(r) === `<${roleLogicalId}>`)) continue;
    for (const statement of props.PolicyDocument.Statement) {
      if (statement.Effect !== 'Allow') continue;
      const actions = Array.isArray(statement.Action) ? statement.Action : [statement.Action];
      const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
      const condition = statement.Condition ? ` if ${JSON.stringify(statement.Condition)}` : '';
      for (const action of actions) {
        const set = allowed.get(action) ?? new Set<string>();
        for (const resource of resources) set.add(`${render(resource)}${condition}`);
        allowed.set(action, set);
      }
    }
  }
  return allowed;
}

/** Builds an expected `action -> resources` map. */
export class Expected {
  private readonly map = new Map<string, Set<string>>();

  /** Allows these actions on these resources. */
  public allow(actions: readonly string[], resources: readonly string[]): this {
    for (const action of actions) {
      const set = this.map.get(action) ?? new Set<string>();
      for (const resource of resources) set.add(resource);
      this.map.set(action, set);
    }
    return this;
  }

  /** Sorted, comparable form. */
  public toObject(): Record<string, string[]> {
    return sorted(this.map);
  }
}

/** Sorted, comparable form of an `action -> resources` map. */
export function sorted(map: Map<string, Set<string>>): Record<string, string[]> {
  return Object.fromEntries(
    [...map].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, [...v].sort()]),
  );
}

/**
 * A table a user brings (`table` prop), built as the README says: the topology's keys, indexes
 * and TTL, point-in-time recovery, a resource policy denying requests without TLS.
 */
export function ownTable(scope: Construct, topology: Topology, id = 'OwnTable'): dynamodb.Table {
  const attr = (key: { name: string; type: 'S' | 'N' }): dynamodb.Attribute => ({
    name: key.name,
    type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER,
  });
  const spec = topology.table;
  const table = new dynamodb.Table(scope, id, {
    partitionKey: attr(spec.partitionKey),
    sortKey: attr(spec.sortKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    timeToLiveAttribute: spec.ttlAttribute,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    resourcePolicy: new iam.PolicyDocument({
      statements: [
        new iam.PolicyStatement({
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['dynamodb:*'],
          resources: ['*'],
          conditions: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      ],
    }),
  });
  for (const index of spec.indexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: attr(index.partitionKey),
      sortKey: attr(index.sortKey),
      projectionType: dynamodb.ProjectionType.KEYS_ONLY,
    });
  }
  return table;
}

/** A synthesized resource, as `Template.findResources` returns it. */
export type Resource = { Properties: Record<string, unknown> };

/** A statement of a queue, bucket or role policy. */
export type Statement = {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};

/** Every statement of the queue policies that guard this queue (by logical id). */
export function queueStatements(template: Template, queueId: string): Statement[] {
  return Object.values(template.findResources('AWS::SQS::QueuePolicy')).flatMap((policy) => {
    const props = (policy as Resource).Properties as {
      Queues: unknown[];
      PolicyDocument: { Statement: Statement[] };
    };
    return props.Queues.some((q) => render(q) === `<${queueId}>`) ? props.PolicyDocument.Statement : [];
  });
}

/** The statement of a queue's policy that denies senders not listed (`OnlyListedSenders`). */
export function sendDeny(template: Template, queueId: string): Statement | undefined {
  return queueStatements(template, queueId).find((s) => s.Sid === 'OnlyListedSenders');
}

/** A condition's values, rendered (`<Role.Arn>` for a role's GetAtt). */
export function conditionValues(statement: Statement | undefined, operator: string, key: string): string[] {
  const value = statement?.Condition?.[operator]?.[key];
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(render);
}

/** The synthesized functions (the six handlers: CDK adds no other function with the defaults). */
export function functionsOf({ template }: Synth): Resource[] {
  return Object.values(template.findResources('AWS::Lambda::Function')) as Resource[];
}

/** A synthesized function's environment variables. */
export function variables(fn: Resource): Record<string, unknown> {
  return (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
}
