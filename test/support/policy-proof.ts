import { readFileSync } from 'node:fs';
import { runSimulation, type Simulation } from '@cloud-copilot/iam-simulate';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Fanin, type FaninProps } from '../../infra/fanin.ts';
import { type CallResource, type FunctionName, isFunction, type RecordedCall } from './call-recorder.ts';

/**
 * The synthesized policies against the recorded calls: each call a function made is evaluated,
 * with a real IAM evaluator (@cloud-copilot/iam-simulate), against its role's identity policies
 * and the resource policy of what it touched (queue, bucket, table, bus), as AWS would. The
 * emulators authorize nothing; this is where a call AWS would deny is found.
 */

/** The account and region the stack is synthesized in (any will do: every ARN is built from them). */
export const ACCOUNT = '111122223333';
export const REGION = 'us-east-1';

export type Json = Record<string, unknown>;
type Resources = Record<string, { Type: string; Properties?: Json }>;

const CDK_CONTEXT = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Json }
).context;

/** A synthesized fanin, its CloudFormation resources resolved to concrete names and ARNs. */
export class SynthesizedPolicies {
  public readonly fanin: Fanin;
  private readonly resources: Resources;
  private readonly stack: Stack;

  /** The customer managed key of the queues, the table and the bucket, when synthesized `encrypted`. */
  public readonly key: kms.Key | undefined;

  /**
   * @param props the construct's props
   * @param options.encrypted with a customer managed key of this stack as `encryptionKey`
   */
  public constructor(props: FaninProps, options: { encrypted?: boolean } = {}) {
    const app = new App({
      context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': [] },
      builtinCloudFormationValidation: false,
    });
    this.stack = new Stack(app, 'PolicyProof', { env: { account: ACCOUNT, region: REGION } });
    this.key = options.encrypted ? new kms.Key(this.stack, 'Key') : undefined;
    this.fanin = new Fanin(this.stack, 'Fanin', {
      ...props,
      ...(this.key ? { encryptionKey: this.key } : {}),
    });
    this.resources = Template.fromStack(this.stack).toJSON().Resources as Resources;
  }

  /** Whether a resource (by logical id) is encrypted with {@link key}. */
  public encryptedWithKey(id: string): boolean {
    if (!this.key) return false;
    const keyId = this.logicalId(this.key);
    return JSON.stringify(this.resources[id]?.Properties ?? {}).includes(`"${keyId}"`);
  }

  /** The logical ids of the resources of a type. */
  public idsOf(type: string): string[] {
    return this.ofType(type).map(([id]) => id);
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
    const resource = this.resources[id];
    if (resource?.Type === 'AWS::KMS::Key') {
      const policy = resource.Properties?.KeyPolicy as { Statement?: unknown[] } | undefined;
      statements.push(...(policy?.Statement ?? []));
    }
    const table = resource;
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

/** What one authorization is evaluated as: who, what, on which ARN, with which context. */
export interface Authorization {
  readonly fn: FunctionName;
  readonly action: string;
  readonly arn: string;
  /** The logical id of the resource whose resource policy applies (a queue, the bucket, a key). */
  readonly resourceId?: string;
  /** Condition keys beyond the principal's (`dynamodb:LeadingKeys`, `kms:ViaService`, ...). */
  readonly context?: Readonly<Record<string, string | readonly string[]>>;
}

/** The evaluator's answer for one authorization. */
export interface Decision {
  /** `Allowed`, `ImplicitlyDenied`, `ExplicitlyDenied`, or `error: ...`. */
  readonly result: string;
  /** The identity and resource statements that allowed it (`policy#index`). */
  readonly allowedBy: readonly string[];
  /** The statements that denied it (`policy#index (sid)`), or why nothing allowed it. */
  readonly deniedBy: readonly string[];
}

/**
 * Evaluates authorizations against one synthesized stack with @cloud-copilot/iam-simulate: the
 * identity policies of the function's role and the resource policy of what it touches (a queue's,
 * the bucket's, a key's), as AWS would, each distinct authorization once.
 */
export class PolicyEvaluator {
  private readonly cache = new Map<string, Promise<Decision>>();
  private readonly identity = new Map<
    FunctionName,
    { principal: string; policies: { name: string; policy: Json }[] }
  >();
  private readonly resources = new Map<string, Json | undefined>();

  /**
   * @param synth the stack
   * @param options.revoke a grant removed in memory, to see the evaluation deny what it allowed:
   *   `action` on `resource` (an ARN exactly as a statement names it) is taken out of every Allow
   *   statement of `fn`'s role (CDK merges grants into shared statements, so the statement is split)
   */
  public constructor(
    public readonly synth: SynthesizedPolicies,
    private readonly options: { revoke?: Revocation } = {},
  ) {}

  /**
   * The decision for one authorization. Authorizations that every statement in play (the role's
   * and the resource's) treats alike are evaluated once: two ARNs that match the same `Resource`
   * patterns, two `dynamodb:LeadingKeys` values that match the same condition values, get the
   * same answer from IAM, so one of them stands for all (the aggregate ids and object keys of a
   * run would otherwise make every call distinct).
   */
  public evaluate(authorization: Authorization): Promise<Decision> {
    const exact = JSON.stringify([
      authorization.fn,
      authorization.action,
      authorization.arn,
      authorization.resourceId,
      authorization.context,
    ]);
    if (!this.distinct.has(exact)) {
      this.distinct.add(exact);
      this.evaluatedAs.push([authorization.fn, authorization.action]);
    }
    const key = this.classOf(authorization);
    let decision = this.cache.get(key);
    if (!decision) {
      decision = this.run(authorization);
      this.cache.set(key, decision);
    }
    return decision;
  }

  private readonly distinct = new Set<string>();
  private readonly evaluatedAs: [FunctionName, string][] = [];
  private readonly patterns = new Map<string, { resources: string[]; values: string[] }>();

  /** The function and action of each distinct authorization evaluated. */
  public keys(): readonly [FunctionName, string][] {
    return this.evaluatedAs;
  }

  /** How many simulations ran (one per class of authorizations IAM treats alike). */
  public get simulations(): number {
    return this.cache.size;
  }

  /** The class of an authorization: what every pattern in play says of its ARN and context values. */
  private classOf({ fn, action, arn, resourceId, context = {} }: Authorization): string {
    const { resources, values } = this.patternsOf(fn, resourceId);
    const signature = (value: string, of: readonly string[]) =>
      of.filter((pattern) => globMatches(pattern, value)).join('\u0000');
    return JSON.stringify([
      fn,
      action,
      resourceId,
      signature(arn, resources),
      Object.entries(context).map(([name, value]) => [
        name,
        [
          ...new Set(([] as string[]).concat(value as string | string[]).map((v) => signature(v, values))),
        ].sort(),
      ]),
    ]);
  }

  /** Every `Resource`/`NotResource` pattern and every condition value of the statements in play. */
  private patternsOf(
    fn: FunctionName,
    resourceId: string | undefined,
  ): { resources: string[]; values: string[] } {
    const key = `${fn} ${resourceId ?? ''}`;
    let found = this.patterns.get(key);
    if (!found) {
      const statements = [
        ...this.role(fn).policies.flatMap(({ policy }) =>
          ([] as Json[]).concat((policy.Statement ?? []) as Json[]),
        ),
        ...([] as Json[]).concat((this.resourcePolicy(resourceId)?.Statement ?? []) as Json[]),
      ];
      const resources = new Set<string>();
      const values = new Set<string>();
      for (const statement of statements) {
        for (const r of ([] as unknown[]).concat(statement.Resource ?? [], statement.NotResource ?? []))
          resources.add(String(r));
        for (const operator of Object.values((statement.Condition ?? {}) as Record<string, Json>))
          for (const v of Object.values(operator))
            for (const x of ([] as unknown[]).concat(v)) values.add(String(x));
      }
      found = { resources: [...resources].sort(), values: [...values].sort() };
      this.patterns.set(key, found);
    }
    return found;
  }

  private role(fn: FunctionName) {
    let found = this.identity.get(fn);
    if (!found) {
      const roleId = this.synth.logicalId(this.synth.fanin.functions[fn].role as never);
      const revoke = this.options.revoke?.fn === fn ? this.options.revoke : undefined;
      const policies = this.synth.identityPolicies(roleId).map(({ name, policy }) => ({
        name,
        policy: revoke
          ? {
              ...policy,
              Statement: ([] as Json[])
                .concat((policy.Statement ?? []) as Json[])
                .flatMap((statement) => revoked(statement, revoke)),
            }
          : policy,
      }));
      found = { principal: this.synth.arnOf(roleId), policies };
      this.identity.set(fn, found);
    }
    return found;
  }

  private resourcePolicy(id: string | undefined): Json | undefined {
    if (id === undefined) return undefined;
    if (!this.resources.has(id)) this.resources.set(id, this.synth.resourcePolicy(id));
    return this.resources.get(id);
  }

  private async run({ fn, action, arn, resourceId, context = {} }: Authorization): Promise<Decision> {
    const { principal, policies } = this.role(fn);
    const resourcePolicy = this.resourcePolicy(resourceId);
    const contextVariables: Record<string, string | string[]> = {
      'aws:PrincipalArn': principal,
      'aws:PrincipalAccount': ACCOUNT,
      'aws:SecureTransport': 'true',
    };
    for (const [name, value] of Object.entries(context))
      contextVariables[name] = typeof value === 'string' ? value : [...value];
    const simulation: Simulation = {
      request: {
        principal,
        action,
        resource: { resource: arn, accountId: ACCOUNT },
        contextVariables,
      },
      identityPolicies: policies,
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(resourcePolicy ? { resourcePolicy } : {}),
    };
    const outcome = await runSimulation(simulation, {});
    if (outcome.resultType === 'error')
      return { result: `error: ${outcome.errors.message}`, allowedBy: [], deniedBy: [] };
    const analysis = outcome.resultType === 'single' ? outcome.result.analysis : outcome.results[0]?.analysis;
    // A statement's index counts from 1 in iam-policy.
    const named = (s: { policyId: string; statement: { index(): number; sid(): string | undefined } }) =>
      `${s.policyId}#${s.statement.index() - 1}${s.statement.sid() ? ` (${s.statement.sid()})` : ''}`;
    const allowedBy = [
      ...(analysis?.identityAnalysis?.allowStatements ?? []),
      ...(analysis?.resourceAnalysis?.allowStatements ?? []),
    ].map((s) => `${s.policyId}#${s.statement.index() - 1}`);
    const denies = [
      ...(analysis?.identityAnalysis?.denyStatements ?? []),
      ...(analysis?.resourceAnalysis?.denyStatements ?? []),
    ].map(named);
    const result = String(outcome.overallResult);
    const deniedBy =
      result === 'Allowed'
        ? []
        : denies.length > 0
          ? denies
          : ['no statement of the role or the resource allows it'];
    return { result, allowedBy, deniedBy };
  }
}

/** Whether an IAM pattern (`*` any run, `?` any one character) matches a value, as StringLike and Resource do. */
export function globMatches(pattern: string, value: string): boolean {
  let regex = globs.get(pattern);
  if (!regex) {
    const body = pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&')))
      .join('');
    regex = new RegExp(`^${body}$`, 's');
    globs.set(pattern, regex);
  }
  return regex.test(value);
}
const globs = new Map<string, RegExp>();

/** A grant taken out of a role in memory (see {@link PolicyEvaluator}). */
export interface Revocation {
  readonly fn: FunctionName;
  readonly action: string;
  readonly resource: string;
}

/** A statement without `action` on `resource`: itself, split, reduced or gone. */
function revoked(statement: Json, { action, resource }: Revocation): Json[] {
  const actions = ([] as string[]).concat(statement.Action as string | string[]);
  const resources = ([] as string[]).concat(statement.Resource as string | string[]);
  if (statement.Effect !== 'Allow' || !actions.includes(action) || !resources.includes(resource))
    return [statement];
  const others = resources.filter((r) => r !== resource);
  const rest = actions.filter((a) => a !== action);
  return [
    ...(others.length > 0 ? [{ ...statement, Resource: others }] : []),
    ...(rest.length > 0 ? [{ ...statement, Action: rest, Resource: resource }] : []),
  ];
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
export interface Verdict extends Decision {
  readonly call: RecordedCall;
  readonly arn: string;
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
    case 'other':
      throw new Error('a call on a resource the recorder does not know');
  }
}

/** Evaluates each distinct call once; returns a verdict per distinct call. */
export async function evaluateCalls(
  synth: SynthesizedPolicies,
  map: ResourceMap,
  calls: readonly RecordedCall[],
  options: ConstructorParameters<typeof PolicyEvaluator>[1] = {},
): Promise<Verdict[]> {
  const distinct = new Map<string, RecordedCall>();
  for (const call of calls) {
    const { command: _command, count: _count, ...authorization } = call;
    distinct.set(JSON.stringify(authorization), call);
  }
  const evaluator = new PolicyEvaluator(synth, options);
  const verdicts: Verdict[] = [];
  for (const call of distinct.values()) {
    if (!isFunction(call.fn)) continue;
    const { arn, id } = target(synth, map, call.resource);
    const decision = await evaluator.evaluate({
      fn: call.fn,
      action: call.action,
      arn,
      ...(id ? { resourceId: id } : {}),
      ...(call.leadingKeys ? { context: { 'dynamodb:LeadingKeys': call.leadingKeys } } : {}),
    });
    verdicts.push({ call, arn, ...decision });
  }
  return verdicts;
}

/** One Allow statement of a role: what it grants. */
export interface Grant {
  readonly actions: unknown;
  readonly resources: unknown;
  readonly condition?: unknown;
}

/**
 * The Allow statements of each role that no verdict was allowed by: grants the recorded calls
 * never used (either the suite does not exercise them, or they are wider than needed). Logs are
 * left out: Lambda's runtime writes them, not the clients the tests record.
 */
export function unusedGrants(
  synth: SynthesizedPolicies,
  verdicts: readonly Pick<Decision, 'allowedBy'>[],
): Record<FunctionName, Grant[]> {
  const used = new Set(verdicts.flatMap((v) => v.allowedBy));
  const report = {} as Record<FunctionName, Grant[]>;
  for (const name of Object.keys(synth.fanin.functions) as FunctionName[]) {
    report[name] = allowStatements(synth, name)
      .filter(({ key }) => !used.has(key))
      .map(({ grant }) => grant);
  }
  return report;
}

/** A role's Allow statements (logs' left out), each with its `policy#index` key. */
export function allowStatements(
  synth: SynthesizedPolicies,
  fn: FunctionName,
): { key: string; grant: Grant }[] {
  const roleId = synth.logicalId(synth.fanin.functions[fn].role as never);
  const found: { key: string; grant: Grant }[] = [];
  for (const { name: policy, policy: document } of synth.identityPolicies(roleId)) {
    const statements = ([] as Json[]).concat((document.Statement ?? []) as Json[]);
    statements.forEach((statement, index) => {
      if (statement.Effect !== 'Allow') return;
      const action = ([] as unknown[]).concat(statement.Action);
      if (action.every((a) => String(a).startsWith('logs:'))) return;
      found.push({
        key: `${policy}#${index}`,
        grant: {
          actions: statement.Action,
          resources: statement.Resource,
          ...(statement.Condition ? { condition: statement.Condition } : {}),
        },
      });
    });
  }
  return found;
}
