import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DefinitionInput } from '../../shared/engine/definition.ts';
import {
  type Caller,
  type CallResource,
  FUNCTION_NAMES,
  type FunctionName,
  isFunction,
  type RecordedCall,
  type RecordedTopology,
} from './call-recorder.ts';
import {
  ACCOUNT,
  allowStatements,
  type Decision,
  type Grant,
  PolicyEvaluator,
  REGION,
  SynthesizedPolicies,
} from './policy-proof.ts';

/**
 * The policy proof of a whole test run: every call the test workers recorded
 * (test/support/call-recorder.ts) that a fanin function makes is evaluated against the
 * synthesized identity policy of that function and the resource policy of what it touched, in a
 * stack of the same shape as the deployment the test provisioned, plain and encrypted with a
 * customer managed key (where the implied `kms:` calls are evaluated against the function's
 * policy and the key's). Calls no function makes are counted by who made them, not evaluated.
 */

/** The prefix of the synthesized stacks (any: the emulator's names are mapped onto it). */
const STACK_PREFIX = 'pp';

/** The topology options that change what the stack grants: the partitions, FIFO, the drained ones. */
interface Shape {
  readonly replyPartitions?: number;
  readonly fifoReplies?: boolean;
  /** Per partition, whether it is drained on a schedule (interval normalized to 60 s). */
  readonly replyDrainIntervalSeconds?: readonly number[];
}

function shapeOf(options: Record<string, unknown>): Shape {
  const partitions = typeof options.replyPartitions === 'number' ? options.replyPartitions : undefined;
  const drains = options.replyDrainIntervalSeconds;
  const count = partitions ?? 1;
  const drained =
    drains === undefined
      ? undefined
      : Array.from({ length: count }, (_, i) => {
          const interval = Array.isArray(drains) ? Number(drains[i] ?? 0) : Number(drains);
          return interval > 0 ? 60 : 0;
        });
  return {
    ...(partitions !== undefined ? { replyPartitions: partitions } : {}),
    ...(options.fifoReplies === true ? { fifoReplies: true } : {}),
    ...(drained?.some((d) => d > 0) ? { replyDrainIntervalSeconds: drained } : {}),
  };
}

/** A queue's name as a definition names it (a URL's last segment). */
function queueName(target: string): string {
  return target.slice(target.lastIndexOf('/') + 1);
}

/** One denied (or unevaluable) authorization, as the report lists it. */
export interface Denial {
  readonly fn: FunctionName;
  readonly action: string;
  /** The ARN evaluated, in the synthesized stack. */
  readonly arn: string;
  /** `plain` or `encrypted` (with a customer managed key). */
  readonly stack: 'plain' | 'encrypted';
  readonly shape: Shape;
  /** What the call was on the emulator, and the SDK command (for an implied `kms:` call, the call that implies it). */
  readonly call: string;
  readonly leadingKeys?: readonly string[];
  readonly result: string;
  readonly deniedBy: readonly string[];
  readonly count: number;
  /** The test file whose deployment the call was made in. */
  readonly testFile?: string;
}

/** What {@link proveRecordedCalls} found. */
export interface PolicyProof {
  /** Every AWS call recorded (authorizations: an item of a transaction counts once). */
  readonly calls: number;
  readonly byCaller: Readonly<Record<string, number>>;
  /** Calls no function makes (the tests, provisioning, the client library, the CLI): not evaluated. */
  readonly notEvaluated: number;
  /**
   * Function calls on resources of no deployment the setup recorded (e.g. a runtime a test
   * started by hand with its own prefix): not evaluated; by function.
   */
  readonly unmapped: Readonly<Record<string, number>>;
  /** Distinct authorizations evaluated per function (plain and encrypted stacks; implied `kms:` calls apart). */
  readonly evaluated: Readonly<Record<FunctionName, number>>;
  readonly kmsEvaluated: Readonly<Record<FunctionName, number>>;
  /** The stack shapes synthesized (each plain and encrypted) and how many deployments each stood for. */
  readonly shapes: readonly { readonly shape: Shape; readonly deployments: number }[];
  /** Queues the fan-out sent to that no definition names (a request's recipients): granted as extraTargetQueueArns. */
  readonly requestNamedTargets: readonly string[];
  readonly denials: readonly Denial[];
  /** Per function, the Allow statements no evaluated call was allowed by, in any stack. */
  readonly unusedGrants: Readonly<Record<FunctionName, readonly (Grant & { stacks: string[] })[]>>;
}

/** The records of a run: the topologies and the calls (equal calls of every worker summed). */
export function readRecords(dir: string): { topologies: RecordedTopology[]; calls: RecordedCall[] } {
  const topologies: RecordedTopology[] = [];
  const calls = new Map<string, RecordedCall & { count: number }>();
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));
  } catch {
    // no records
  }
  for (const file of files) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const record = JSON.parse(line) as (RecordedCall & { count?: number }) | RecordedTopology;
      if ('kind' in record && record.kind === 'topology') {
        topologies.push(record);
        continue;
      }
      const { count = 1, ...call } = record as RecordedCall & { count?: number };
      const key = JSON.stringify(call);
      const seen = calls.get(key);
      if (seen) seen.count += count;
      else calls.set(key, { ...call, count });
    }
  }
  return { topologies, calls: [...calls.values()] };
}

function nameOfResource(resource: CallResource): string | undefined {
  switch (resource.kind) {
    case 'queue':
    case 'bus':
      return resource.name;
    case 'table':
      return resource.name;
    case 'object':
    case 'bucket':
      return resource.bucket;
    case 'other':
      return undefined;
  }
}

/** The `kms:` actions a call on a resource encrypted with a customer managed key makes AWS take for the caller. */
export function impliedKmsActions(action: string): string[] {
  if (action === 'sqs:SendMessage') return ['kms:GenerateDataKey', 'kms:Decrypt'];
  if (action === 'sqs:ReceiveMessage') return ['kms:Decrypt'];
  if (action === 's3:PutObject') return ['kms:GenerateDataKey'];
  if (action === 's3:GetObject') return ['kms:Decrypt'];
  if (action.startsWith('dynamodb:')) return ['kms:Decrypt'];
  return [];
}

/**
 * Evaluates the records of a run (see the module's comment).
 * @param dir the directory the workers wrote their records to
 */
export async function proveRecordedCalls(
  dir: string,
  options: {
    /** Takes `action` on the key out of `fn`'s role in the encrypted stacks (in memory): the proof's own test. */
    readonly revokeKeyUse?: { readonly fn: FunctionName; readonly action: string };
  } = {},
): Promise<PolicyProof> {
  const { topologies, calls } = readRecords(dir);
  const byCaller: Record<string, number> = {};
  for (const call of calls) byCaller[call.fn] = (byCaller[call.fn] ?? 0) + (call.count ?? 1);
  const total = Object.values(byCaller).reduce((a, b) => a + b, 0);
  const notEvaluated = Object.entries(byCaller)
    .filter(([caller]) => !isFunction(caller as Caller))
    .reduce((sum, [, n]) => sum + n, 0);

  // Which deployment (prefix) each function call was made in.
  const byPrefix = new Map(topologies.map((t) => [t.prefix, t]));
  const prefixes = [...byPrefix.keys()].sort((a, b) => b.length - a.length);
  const namedBy = new Map<string, string>();
  for (const t of topologies) for (const target of t.targets) namedBy.set(queueName(target), t.prefix);
  const deploymentOf = (call: RecordedCall): string | undefined => {
    const name = nameOfResource(call.resource);
    if (name === undefined) return undefined;
    const own = prefixes.find((p) => name.startsWith(`${p}-`));
    if (own) return own;
    if (call.resource.kind === 'queue') return namedBy.get(name);
    // A bus fanin does not name: every stack grants its outputs' bus alike.
    if (call.resource.kind === 'bus') return prefixes[0];
    return undefined;
  };

  const unmapped: Record<string, number> = {};
  const shapes = new Map<string, { shape: Shape; prefixes: Set<string>; calls: RecordedCall[] }>();
  for (const call of calls) {
    if (!isFunction(call.fn)) continue;
    const prefix = deploymentOf(call);
    const topology = prefix ? byPrefix.get(prefix) : undefined;
    if (!prefix || !topology) {
      unmapped[call.fn] = (unmapped[call.fn] ?? 0) + (call.count ?? 1);
      continue;
    }
    const shape = shapeOf(topology.options);
    const key = JSON.stringify(shape);
    let group = shapes.get(key);
    if (!group) {
      group = { shape, prefixes: new Set(), calls: [] };
      shapes.set(key, group);
    }
    group.prefixes.add(prefix);
    group.calls.push({ ...call, prefix } as RecordedCall);
  }

  const evaluated = Object.fromEntries(FUNCTION_NAMES.map((f) => [f, 0])) as Record<FunctionName, number>;
  const kmsEvaluated = { ...evaluated };
  const denials: Denial[] = [];
  const requestNamedTargets = new Set<string>();
  const statements = new Map<
    string,
    { fn: FunctionName; grant: Grant; stacks: Set<string>; used: boolean }
  >();

  for (const group of shapes.values()) {
    const targets = new Set<string>();
    const cancelTargets = new Set<string>();
    let cancelsNamed = false;
    for (const prefix of group.prefixes) {
      const topology = byPrefix.get(prefix);
      for (const target of topology?.targets ?? []) targets.add(queueName(target));
      // Cancellation notices go where the sub-requests went, sent by the completers.
      for (const target of topology?.cancelTargets ?? []) cancelTargets.add(queueName(target));
      cancelsNamed ||= topology?.cancelsNamed === true;
    }
    // A queue the fan-out sends to that is neither fanin's nor named by a definition: a request's
    // own recipient, which a deployment grants by extraTargetQueueArns.
    const own = (name: string, prefix: string) => name.startsWith(`${prefix}-`);
    const extra = new Set<string>();
    for (const call of group.calls) {
      const prefix = (call as RecordedCall & { prefix: string }).prefix;
      if (call.fn === 'fanOut' && call.resource.kind === 'queue' && !targets.has(call.resource.name)) {
        if (!own(call.resource.name, prefix) || !isFaninQueueName(call.resource.name, prefix))
          extra.add(call.resource.name);
      }
    }
    for (const name of extra) requestNamedTargets.add(name);
    const props = stackProps(group.shape, [...targets], [...extra], cancelTargets, cancelsNamed);
    const stacks = {
      plain: new SynthesizedPolicies(props),
      encrypted: new SynthesizedPolicies(props, { encrypted: true }),
    };
    const shapeLabel = JSON.stringify(group.shape);
    for (const [variant, synth] of Object.entries(stacks) as ['plain' | 'encrypted', SynthesizedPolicies][]) {
      const keyId = synth.key ? synth.logicalId(synth.key) : undefined;
      const revoke = options.revokeKeyUse;
      const evaluator = new PolicyEvaluator(
        synth,
        revoke && keyId ? { revoke: { ...revoke, resource: synth.arnOf(keyId) } } : {},
      );
      const queues = new Map(synth.idsOf('AWS::SQS::Queue').map((id) => [synth.nameOf(id), id]));
      const tableId = synth.logicalId(synth.fanin.table as never);
      const bucketId = synth.logicalId(synth.fanin.bucket as never);
      const busId = synth.fanin.eventBus ? synth.logicalId(synth.fanin.eventBus as never) : undefined;
      const used = new Set<string>();
      const pending: Promise<void>[] = [];
      for (const call of group.calls) {
        const fn = call.fn as FunctionName;
        const prefix = (call as RecordedCall & { prefix: string }).prefix;
        const local = (name: string) =>
          name.startsWith(`${prefix}-`) ? `${STACK_PREFIX}${name.slice(prefix.length)}` : name;
        const mapped = mapResource(call.resource, {
          queue: (name) => {
            const id = queues.get(local(name));
            return id
              ? { arn: synth.arnOf(id), id, service: 'sqs' }
              : { arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`, service: 'sqs' };
          },
          table: (name, index) =>
            name === `${prefix}-state`
              ? {
                  arn: `${synth.arnOf(tableId)}${index ? `/index/${index}` : ''}`,
                  id: tableId,
                  service: 'dynamodb',
                }
              : undefined,
          bucket: (name, key) =>
            name === `${prefix}-payloads`
              ? {
                  arn: `${synth.arnOf(bucketId)}${key !== undefined ? `/${key}` : ''}`,
                  id: bucketId,
                  service: 's3',
                }
              : undefined,
          bus: () => (busId ? { arn: synth.arnOf(busId), id: busId, service: 'events' } : undefined),
        });
        const describe = `${call.command} on ${JSON.stringify(call.resource)}`;
        const deny = (
          arn: string,
          action: string,
          decision: Pick<Decision, 'result' | 'deniedBy'>,
          implied?: string,
        ) =>
          denials.push({
            fn,
            action,
            arn,
            stack: variant,
            shape: group.shape,
            call: implied ? `${describe} (implies ${action})` : describe,
            ...(call.leadingKeys ? { leadingKeys: call.leadingKeys } : {}),
            result: decision.result,
            deniedBy: decision.deniedBy,
            count: call.count ?? 1,
            ...(byPrefix.get(prefix)?.testFile ? { testFile: byPrefix.get(prefix)?.testFile } : {}),
          });
        if (!mapped) {
          deny('-', call.action, {
            result: 'unmapped',
            deniedBy: ['the call is on a resource the synthesized stack does not have'],
          });
          continue;
        }
        pending.push(
          (async () => {
            const decision = await evaluator.evaluate({
              fn,
              action: call.action,
              arn: mapped.arn,
              ...(mapped.id ? { resourceId: mapped.id } : {}),
              ...(call.leadingKeys ? { context: { 'dynamodb:LeadingKeys': call.leadingKeys } } : {}),
            });
            for (const s of decision.allowedBy) used.add(s);
            if (decision.result !== 'Allowed') deny(mapped.arn, call.action, decision);
            if (!keyId || !mapped.id || !synth.encryptedWithKey(mapped.id)) return;
            const keyArn = synth.arnOf(keyId);
            for (const action of impliedKmsActions(call.action)) {
              const kms = await evaluator.evaluate({
                fn,
                action,
                arn: keyArn,
                resourceId: keyId,
                context: {
                  'kms:ViaService': `${mapped.service}.${REGION}.amazonaws.com`,
                  'kms:CallerAccount': ACCOUNT,
                  ...encryptionContext(mapped.service, mapped.arn),
                },
              });
              for (const s of kms.allowedBy) used.add(s);
              if (kms.result !== 'Allowed') deny(keyArn, action, kms, call.action);
            }
          })(),
        );
      }
      await Promise.all(pending);
      for (const fn of FUNCTION_NAMES) {
        for (const { key, grant } of allowStatements(synth, fn)) {
          const text = `${fn} ${JSON.stringify(grant)}`;
          const entry = statements.get(text) ?? { fn, grant, stacks: new Set<string>(), used: false };
          entry.stacks.add(`${variant} ${shapeLabel}`);
          entry.used ||= used.has(key);
          statements.set(text, entry);
        }
      }
      countEvaluated(evaluator, variant === 'plain' ? evaluated : undefined, kmsEvaluated);
    }
  }

  const unusedGrants = Object.fromEntries(
    FUNCTION_NAMES.map((f) => [f, [] as (Grant & { stacks: string[] })[]]),
  );
  for (const entry of statements.values())
    if (!entry.used) unusedGrants[entry.fn]?.push({ ...entry.grant, stacks: [...entry.stacks] });

  return {
    calls: total,
    byCaller,
    notEvaluated,
    unmapped,
    evaluated,
    kmsEvaluated,
    shapes: [...shapes.values()].map((g) => ({ shape: g.shape, deployments: g.prefixes.size })),
    requestNamedTargets: [...requestNamedTargets].sort(),
    denials,
    unusedGrants: unusedGrants as Record<FunctionName, (Grant & { stacks: string[] })[]>,
  };
}

/** Whether a name under a deployment's prefix is one of fanin's queues (not a target a test named under it). */
function isFaninQueueName(name: string, prefix: string): boolean {
  const rest = name
    .slice(prefix.length + 1)
    .replace(/\.fifo$/, '')
    .replace(/-dlq$/, '');
  return /^(ingress|control|timer|backlog|out-[a-z-]+|reply-\d+)$/.test(rest);
}

function stackProps(
  shape: Shape,
  targets: readonly string[],
  extra: readonly string[],
  cancelTargets: ReadonlySet<string> = new Set(),
  cancelsNamed = false,
) {
  const definitions: DefinitionInput[] = [];
  // The targets of cancelling definitions stand in a cancelling definition of their own.
  for (const [group, cancelOutstanding] of [
    [[...targets].filter((t) => !cancelTargets.has(t)).sort(), false],
    [[...targets].filter((t) => cancelTargets.has(t)).sort(), true],
  ] as const) {
    for (let i = 0; i < group.length; i += 1000) {
      definitions.push({
        name: `${cancelOutstanding ? 'cancels' : 'targets'}-${i / 1000}`,
        completion: { strategy: 'all' },
        fanOut: { type: 'recipient-list', recipients: group.slice(i, i + 1000) },
        timeoutSeconds: 60,
        ...(cancelOutstanding ? { cancelOutstanding } : {}),
      });
    }
  }
  if (cancelsNamed && extra.length > 0)
    definitions.push({
      name: 'cancels-named',
      completion: { strategy: 'all' },
      fanOut: { type: 'recipient-list' },
      timeoutSeconds: 60,
      cancelOutstanding: true,
    });
  if (definitions.length === 0)
    definitions.push({
      name: 'none',
      completion: { strategy: 'all' },
      fanOut: { type: 'none' },
      timeoutSeconds: 60,
    });
  return {
    definitions,
    prefix: STACK_PREFIX,
    createEventBus: true,
    ...shape,
    ...(extra.length > 0
      ? { extraTargetQueueArns: [...extra].sort().map((name) => `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`) }
      : {}),
  };
}

interface Mapped {
  readonly arn: string;
  readonly id?: string;
  readonly service: string;
}

function mapResource(
  resource: CallResource,
  by: {
    queue: (name: string) => Mapped;
    table: (name: string, index?: string) => Mapped | undefined;
    bucket: (name: string, key?: string) => Mapped | undefined;
    bus: (name: string) => Mapped | undefined;
  },
): Mapped | undefined {
  switch (resource.kind) {
    case 'queue':
      return by.queue(resource.name);
    case 'table':
      return by.table(resource.name, resource.index);
    case 'object':
      return by.bucket(resource.bucket, resource.key);
    case 'bucket':
      return by.bucket(resource.bucket);
    case 'bus':
      return by.bus(resource.name);
    case 'other':
      return undefined;
  }
}

/** The encryption context each service passes to KMS (what a key policy may condition on). */
function encryptionContext(service: string, arn: string): Record<string, string> {
  if (service === 'sqs') return { 'kms:EncryptionContext:aws:sqs:arn': arn };
  if (service === 's3') return { 'kms:EncryptionContext:aws:s3:arn': arn };
  if (service === 'dynamodb')
    return {
      'kms:EncryptionContext:aws:dynamodb:tableName': arn.split('/')[1] ?? '',
      'kms:EncryptionContext:aws:dynamodb:subscriberId': ACCOUNT,
    };
  return {};
}

/** Counts the distinct authorizations evaluated: the calls (of the plain stack, when given) and the implied `kms:` calls. */
function countEvaluated(
  evaluator: PolicyEvaluator,
  calls: Record<FunctionName, number> | undefined,
  kms: Record<FunctionName, number>,
): void {
  for (const [fn, action] of evaluator.keys()) {
    const counts = action.startsWith('kms:') ? kms : calls;
    if (counts) counts[fn] += 1;
  }
}

/** One line for the test output. */
export function summaryOf(proof: PolicyProof, reportFile: string): string {
  const fns = FUNCTION_NAMES.map((f) => `${f} ${proof.evaluated[f]}`).join(', ');
  const kms = FUNCTION_NAMES.map((f) => `${f} ${proof.kmsEvaluated[f]}`).join(', ');
  const unused = Object.values(proof.unusedGrants).reduce((n, g) => n + g.length, 0);
  const unmapped = Object.values(proof.unmapped).reduce((a, b) => a + b, 0);
  const others = Object.entries(proof.byCaller)
    .filter(([c]) => !isFunction(c as Caller))
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  return (
    `[policy] ${proof.calls} AWS calls recorded; ${proof.notEvaluated} made by no function, not evaluated (${others}); ` +
    `${unmapped} function calls in deployments not recorded; distinct calls evaluated: ${fns}; implied kms: ${kms}; ` +
    `${proof.shapes.length} stack shapes; ${proof.denials.length} denied; ${unused} grants no call used; report: ${reportFile}`
  );
}
