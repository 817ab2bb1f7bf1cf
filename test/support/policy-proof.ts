import { readFileSync } from 'node:fs';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Fanin, type FaninProps } from '../../infra/fanin.ts';
import type { CallResource, FunctionName, RecordedCall } from './call-recorder.ts';

/**
 * The synthesized policies against the recorded calls: each call a function made is evaluated,
 * with a real IAM evaluator (@cloud-copilot/iam-simulate), against its role's identity policies
 * and the resource policy of what it touched (queue, bucket, table, bus), as AWS would. The
 * emulators authorize nothing; this is where a call AWS would deny is found.
 */

/** The account and region the stack is synthesized in (any will do: every ARN is built from them). */
export const ACCOUNT = '111122223333';
export const REGION = 'us-east-1';

type Json = Record<string, unknown>;
type Resources = Record<string, { Type: string; Properties?: Json }>;

const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Json }
).context;

/** A synthesized fanin, its CloudFormation resources resolved to concrete names and ARNs. */
export class SynthesizedPolicies {
  public readonly fanin: Fanin;
  private readonly resources: Resources;
  private readonly stack: Stack;

  public constructor(props: FaninProps) {
    const app = new App({
      context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: false,
    });
    this.stack = new Stack(app, 'PolicyProof', { env: { account: ACCOUNT, region: REGION } });
    this.fanin = new Fanin(this.stack, 'Fanin', props);
    this.resources = Template.fromStack(this.stack).toJSON().Resources as Resources;
  }

  /** The logical id of a construct's CloudFormation resource. */
  public logicalId(construct: { node: { defaultChild?: unknown } }): string {
    const child = construct.node.defaultChild as { logicalId: string } | undefined;
    if (!child) throw new Error('construct has no default child');
    return this.stack.resolve(child.logicalId) as string;
  }

  /** The ARN CloudFormation would give a resource (`Fn::GetAtt [id, Arn]`). */
  public arnOf(id: string): string {
    const resource = this.resources[id];
    if (!resource) throw new Error(`no resource ${id} in the template`);
    const p = resource.Properties ?? {};
    const at = `${REGION}:${ACCOUNT}`;
    switch (resource.Type) {
      case 'AWS::SQS::Queue':
        return `arn:aws:sqs:${at}:${this.nameOf(id)}`;
      case 'AWS::DynamoDB::Table':
      case 'AWS::DynamoDB::GlobalTable':
        return `arn:aws:dynamodb:${at}:table/${this.nameOf(id)}`;
      case 'AWS::S3::Bucket':
        return `arn:aws:s3:::${this.nameOf(id)}`;
      case 'AWS::IAM::Role':
        return `arn:aws:iam::${ACCOUNT}:role/${this.nameOf(id)}`;
      case 'AWS::Events::EventBus':
        return `arn:aws:events:${at}:event-bus/${this.nameOf(id)}`;
      case 'AWS::Events::Rule':
        return `arn:aws:events:${at}:rule/${id}`;
      case 'AWS::Logs::LogGroup':
        return `arn:aws:logs:${at}:log-group:${String(p.LogGroupName ?? id)}:*`;
      case 'AWS::KMS::Key':
        return `arn:aws:kms:${at}:key/${id}`;
      case 'AWS::Lambda::Function':
        return `arn:aws:lambda:${at}:function:${String(p.FunctionName ?? id)}`;
      default:
        throw new Error(`no ARN for ${resource.Type} ${id}`);
    }
  }

  /** A resource's physical name (`Ref` of a bucket, table, role, bus; a queue's name). */
  public nameOf(id: string): string {
    const resource = this.resources[id];
    if (!resource) throw new Error(`no resource ${id} in the template`);
    const p = resource.Properties ?? {};
    const named =
      p.QueueName ?? p.TableName ?? p.BucketName ?? p.RoleName ?? p.Name ?? p.LogGroupName ?? p.FunctionName;
    if (named !== undefined) return String(this.resolve(named));
    // CloudFormation names it: any stable name does, lower case for a bucket.
    return resource.Type === 'AWS::S3::Bucket' ? id.toLowerCase() : id;
  }

  /** A value with every intrinsic function resolved. */
  public resolve(value: unknown): unknown {
    if (Array.isArray(value)) return value.map((v) => this.resolve(v));
    if (!value || typeof value !== 'object') return value;
    const v = value as Json;
    if ('Ref' in v) {
      const ref = String(v.Ref);
      const pseudo: Record<string, string> = {
        'AWS::Partition': 'aws',
        'AWS::Region': REGION,
        'AWS::AccountId': ACCOUNT,
        'AWS::URLSuffix': 'amazonaws.com',
      };
      if (pseudo[ref]) return pseudo[ref];
      const resource = this.resources[ref];
      if (resource?.Type === 'AWS::SQS::Queue')
        return `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${this.nameOf(ref)}`;
      return this.nameOf(ref);
    }
    if ('Fn::GetAtt' in v) {
      const [id, attribute] = v['Fn::GetAtt'] as [string, string];
      if (attribute === 'Arn') return this.arnOf(id);
      if (attribute === 'QueueName') return this.nameOf(id);
      if (attribute === 'QueueUrl') return this.resolve({ Ref: id });
      throw new Error(`no value for Fn::GetAtt ${id}.${attribute}`);
    }
    if ('Fn::Join' in v) {
      const [separator, parts] = v['Fn::Join'] as [string, unknown[]];
      return (this.resolve(parts) as unknown[]).map(String).join(separator);
    }
    if ('Fn::Select' in v) {
      const [index, list] = v['Fn::Select'] as [number, unknown];
      return (this.resolve(list) as unknown[])[Number(index)];
    }
    if ('Fn::Split' in v) {
      const [separator, source] = v['Fn::Split'] as [string, unknown];
      return String(this.resolve(source)).split(separator);
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.resolve(x)]));
  }

  private ofType(type: string): [string, Json][] {
    return Object.entries(this.resources)
      .filter(([, r]) => r.Type === type)
      .map(([id, r]) => [id, r.Properties ?? {}]);
  }

  /** The identity policies attached to a role (by logical id), resolved. */
  public identityPolicies(roleId: string): { name: string; policy: Json }[] {
    return [...this.ofType('AWS::IAM::Policy'), ...this.ofType('AWS::IAM::ManagedPolicy')]
      .filter(([, p]) => ((p.Roles ?? []) as Json[]).some((r) => r.Ref === roleId))
      .map(([id, p]) => ({ name: id, policy: this.resolve(p.PolicyDocument) as Json }));
  }

  /** The resource policy of a queue, bucket, table or bus (by logical id), merged; undefined if none. */
  public resourcePolicy(id: string): Json | undefined {
    const statements: unknown[] = [];
    const refers = (value: unknown) => JSON.stringify(value) === JSON.stringify({ Ref: id });
    for (const [, p] of this.ofType('AWS::SQS::QueuePolicy')) {
      if (((p.Queues ?? []) as unknown[]).some(refers))
        statements.push(...((p.PolicyDocument as { Statement: unknown[] }).Statement ?? []));
    }
    for (const [, p] of this.ofType('AWS::S3::BucketPolicy')) {
      if (refers(p.Bucket))
        statements.push(...((p.PolicyDocument as { Statement: unknown[] }).Statement ?? []));
    }
    for (const [, p] of this.ofType('AWS::Events::EventBusPolicy')) {
      if (refers(p.EventBusName)) statements.push(p.Statement);
    }
    const table = this.resources[id];
    if (table?.Type === 'AWS::DynamoDB::Table') {
      const own = (
        table.Properties?.ResourcePolicy as { PolicyDocument?: { Statement: unknown[] } } | undefined
      )?.PolicyDocument;
      if (own) statements.push(...own.Statement);
    }
    if (statements.length === 0) return undefined;
    return { Version: '2012-10-17', Statement: this.resolve(statements) };
  }
}

/** How the emulator's resources map to the synthesized ones, by role. */
export interface ResourceMap {
  /** Queue name on the emulator -> logical id of the synthesized queue (fanin's own queues). */
  readonly queues: ReadonlyMap<string, string>;
  /** The emulator's table name -> the synthesized table. */
  readonly table: { readonly name: string; readonly id: string };
  readonly bucket?: { readonly name: string; readonly id: string };
  readonly bus?: { readonly name: string; readonly id: string };
}

/** One recorded call's verdict. */
export interface Verdict {
  readonly call: RecordedCall;
  readonly arn: string;
  readonly result: string;
  /** The identity statements that allowed it (policy name and index), for the unused-grant report. */
  readonly allowedBy: readonly string[];
}

/** The ARN and the resource's logical id (when it is fanin's) of a recorded resource. */
function target(
  synth: SynthesizedPolicies,
  map: ResourceMap,
  resource: CallResource,
): { arn: string; id?: string } {
  switch (resource.kind) {
    case 'queue': {
      const id = map.queues.get(resource.name);
      // A queue that is not fanin's (a responder's): named in fanin's account and region, as the
      // fan-out's target grants name it.
      return id ? { arn: synth.arnOf(id), id } : { arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${resource.name}` };
    }
    case 'table': {
      if (resource.name !== map.table.name) throw new Error(`a call on an unmapped table ${resource.name}`);
      const arn = synth.arnOf(map.table.id);
      return { arn: resource.index ? `${arn}/index/${resource.index}` : arn, id: map.table.id };
    }
    case 'object':
    case 'bucket': {
      if (!map.bucket || resource.bucket !== map.bucket.name)
        throw new Error(`a call on an unmapped bucket ${resource.bucket}`);
      const arn = synth.arnOf(map.bucket.id);
      return { arn: resource.kind === 'object' ? `${arn}/${resource.key}` : arn, id: map.bucket.id };
    }
    case 'bus': {
      if (!map.bus || resource.name !== map.bus.name)
        throw new Error(`a call on an unmapped bus ${resource.name}`);
      return { arn: synth.arnOf(map.bus.id), id: map.bus.id };
    }
  }
}

/** Evaluates each distinct call once; returns a verdict per distinct call. */
export async function evaluateCalls(
  synth: SynthesizedPolicies,
  map: ResourceMap,
  calls: readonly RecordedCall[],
): Promise<Verdict[]> {
  const distinct = new Map<string, RecordedCall>();
  for (const call of calls) {
    const { command: _command, ...authorization } = call;
    distinct.set(JSON.stringify(authorization), call);
  }
  const verdicts: Verdict[] = [];
  for (const call of distinct.values()) {
    const fn = synth.fanin.functions[call.fn as FunctionName];
    const roleId = synth.logicalId(fn.role as never);
    const principal = synth.arnOf(roleId);
    const { arn, id } = target(synth, map, call.resource);
    const resourcePolicy = id ? synth.resourcePolicy(id) : undefined;
    const simulation: Simulation = {
      request: {
        principal,
        action: call.action,
        resource: { resource: arn, accountId: ACCOUNT },
        contextVariables: {
          'aws:PrincipalArn': principal,
          'aws:PrincipalAccount': ACCOUNT,
          'aws:SecureTransport': 'true',
          ...(call.leadingKeys ? { 'dynamodb:LeadingKeys': [...call.leadingKeys] } : {}),
        },
      },
      identityPolicies: synth.identityPolicies(roleId),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    };
    const outcome = await runSimulation(simulation, {});
    if (outcome.resultType === 'error') {
      verdicts.push({ call, arn, result: `error: ${outcome.errors.message}`, allowedBy: [] });
      continue;
    }
    const analysis = outcome.resultType === 'single' ? outcome.result.analysis : outcome.results[0]?.analysis;
    // A statement's index counts from 1 in iam-policy.
    const allowedBy = (analysis?.identityAnalysis?.allowStatements ?? []).map(
      (s) => `${s.policyId}#${s.statement.index() - 1}`,
    );
    verdicts.push({ call, arn, result: String(outcome.overallResult), allowedBy });
  }
  return verdicts;
}

/**
 * The Allow statements of each role that no recorded call was allowed by: grants the recorded
 * calls never used (either the suite does not exercise them, or they are wider than needed).
 */
export function unusedGrants(
  synth: SynthesizedPolicies,
  verdicts: readonly Verdict[],
): Record<string, { actions: unknown; resources: unknown; condition?: unknown }[]> {
  const used = new Set(verdicts.flatMap((v) => v.allowedBy));
  const report: Record<string, { actions: unknown; resources: unknown; condition?: unknown }[]> = {};
  for (const [name, fn] of Object.entries(synth.fanin.functions)) {
    const roleId = synth.logicalId(fn.role as never);
    const unused: { actions: unknown; resources: unknown; condition?: unknown }[] = [];
    for (const { name: policy, policy: document } of synth.identityPolicies(roleId)) {
      const statements = ([] as Json[]).concat((document.Statement ?? []) as Json[]);
      statements.forEach((statement, index) => {
        if (statement.Effect !== 'Allow') return;
        const action = ([] as unknown[]).concat(statement.Action);
        // Logs are written by Lambda's runtime, not through the clients the tests record.
        if (action.every((a) => String(a).startsWith('logs:'))) return;
        const key = `${policy}#${index}`;
        if (!used.has(key))
          unused.push({
            actions: statement.Action,
            resources: statement.Resource,
            ...(statement.Condition ? { condition: statement.Condition } : {}),
          });
      });
    }
    report[name] = unused;
  }
  return report;
}
