import { Annotations, ArnFormat, Aws, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import type { Definition } from '../shared/engine/definition.ts';
import { OUTPUT_ROLES, QueueRole } from '../shared/topology/topology.ts';
import type { FaninFunction } from './fanin-function.ts';
import type { FaninFunctions, FaninProps, FaninSender } from './fanin-props.ts';
import type { FaninQueue } from './fanin-queue.ts';
import { ACCOUNT_ID, IAM_PRINCIPAL_ARN, QUEUE_URL } from './validate-props.ts';

/**
 * Who may do what in a fanin instance: the per-handler access table ({@link HANDLER_ACCESS}) and
 * the grants it drives, the queue and bucket policies that fence off fanin's own queues and
 * prefixes, and the cdk-nag acknowledgements of the wildcards those grants hold. Each role allows
 * what its handler's use cases call and nothing else (docs/security.md lists the call sites;
 * test/unit/infra/fanin-access.test.ts compares each policy action by action).
 */

/**
 * The partition key of the reply destination's partition-state items in the state table:
 * `PD#<destination>` (shared/adapters/dynamo-partition-registry.ts) for the destination `replies`
 * (REPLY_DESTINATION in shared/app.ts). The distributor's table access is limited to these items;
 * test/unit/infra/fanin-access.test.ts drives the registry and checks it uses no other key.
 */
export const PARTITION_STATE_KEY = 'PD#replies';

/**
 * The partition keys of an aggregate's items in the state table (header, request, replies, held
 * replies: `A#<aggregate>`, shared/adapters/dynamo-state-store.ts): what the data-plane roles may touch,
 * as a `dynamodb:LeadingKeys` pattern.
 */
export const AGGREGATE_KEYS = 'A#*';
/** The partition keys of the definitions' runtime parameters (`D#<definition>`). */
export const PARAMETER_KEYS = 'D#*';

/**
 * Key prefixes of the payload bucket (the same as shared/adapters/s3-claim-check.ts's; the IAM
 * test checks they agree). Producers and responders write claim-check bodies only under
 * `incoming/` (the runtime follows a pointer in a message it consumes to nothing else); fanin
 * stores the bodies its state references under `state/`, large sub-requests for responders under
 * `requests/` and large outputs under `outputs/`.
 */
export const PayloadPrefix = {
  INCOMING: 'incoming/',
  STATE: 'state/',
  REQUESTS: 'requests/',
  OUTPUTS: 'outputs/',
} as const;
/** The prefixes only fanin's roles may write: everything fanin reads back or sends out. */
const FANIN_WRITTEN_PREFIXES = [PayloadPrefix.STATE, PayloadPrefix.REQUESTS, PayloadPrefix.OUTPUTS] as const;
/** What a reader of fanin's messages (responder, output consumer) may follow a pointer to; never `state/`. */
export const READER_PREFIXES = [
  PayloadPrefix.INCOMING,
  PayloadPrefix.REQUESTS,
  PayloadPrefix.OUTPUTS,
] as const;

/** What the grants act on: the resources of a {@link Fanin} (the construct itself). */
export interface FaninResources extends IConstruct {
  readonly table: dynamodb.ITable;
  readonly bucket: s3.IBucket;
  readonly queues: Readonly<Record<QueueRole, FaninQueue>>;
  readonly replyPartitions: readonly FaninQueue[];
  readonly functions: FaninFunctions;
  readonly eventBus?: events.IEventBus;
}

/**
 * What each handler does outside its own log group and the queue it consumes, from the use cases
 * it runs (docs/security.md lists the call sites):
 * - `items`: DynamoDB actions on items of the state table, by the partition keys they may touch
 *   (`dynamodb:LeadingKeys`). Writes inside a TransactWriteItems are authorized as PutItem /
 *   UpdateItem / DeleteItem, each item under its own key. No handler scans, batch-gets,
 *   batch-writes or describes the table.
 * - `indexes`: the indexes it queries (Query only).
 * - `payloads`: reads claim-check objects producers wrote (`incoming/`), reads and writes the
 *   bodies fanin stores (`state/`) and its large outputs (`outputs/`).
 * - `sendsRequests`: writes large sub-requests (`requests/`).
 * - `outputs`: sends to the output queues and, with a bus, puts events on it.
 * - `armsTimers`: sends delayed messages to the timer queue.
 */
interface HandlerAccess {
  readonly items: readonly { readonly keys: readonly string[]; readonly actions: readonly string[] }[];
  readonly indexes: readonly string[];
  readonly payloads: boolean;
  /** Stores large sub-requests under `requests/` (the fan-out's sender). */
  readonly sendsRequests?: boolean;
  readonly outputs: boolean;
  readonly armsTimers: boolean;
}

/** Aggregate items: open, record, hold, consolidate, count late, complete and close. */
const AGGREGATE_ACTIONS = [
  'dynamodb:DeleteItem',
  'dynamodb:GetItem',
  'dynamodb:PutItem',
  'dynamodb:Query',
  'dynamodb:UpdateItem',
] as const;

/** s3:GetObject resolves a pointer or a stored payload; s3:PutObject stores one. */
const PAYLOAD_ACTIONS = ['s3:GetObject', 's3:PutObject'] as const;

const AGGREGATES = { keys: [AGGREGATE_KEYS], actions: AGGREGATE_ACTIONS };
/** The effective parameters of a definition, read when an aggregate opens. */
const READ_PARAMETERS = { keys: [PARAMETER_KEYS], actions: ['dynamodb:GetItem'] };

export const HANDLER_ACCESS: Readonly<Record<keyof FaninFunctions, HandlerAccess>> = {
  // The fan-out also reads the reply destination's partition state to choose a reply-to partition.
  fanOut: {
    items: [AGGREGATES, READ_PARAMETERS, { keys: [PARTITION_STATE_KEY], actions: ['dynamodb:Query'] }],
    indexes: [],
    payloads: true,
    sendsRequests: true,
    outputs: true,
    armsTimers: true,
  },
  // Self-starting aggregates open on a reply, with their definition's parameters.
  reply: {
    items: [AGGREGATES, READ_PARAMETERS],
    indexes: [],
    payloads: true,
    outputs: true,
    armsTimers: true,
  },
  timer: { items: [AGGREGATES], indexes: [], payloads: true, outputs: true, armsTimers: true },
  // The sweeper finds due items in `due` and acts on them (it is the timers' safety net), and arms
  // the timers of the items entering SQS's 15-minute delay horizon (timers.ts, armEntering).
  sweeper: { items: [AGGREGATES], indexes: ['due'], payloads: true, outputs: true, armsTimers: true },
  // Control lists (the `due` index a page at a time, then each aggregate: Query), completes and
  // purges (GetItem of the header and request, UpdateItem of the header: seal, lease, emitted,
  // close), and sets parameters (PutItem of `D#<definition>`). It never opens an aggregate or
  // records a reply (the puts) nor consolidates held replies (the only delete). Its continuations
  // go to its own queue (granted below).
  control: {
    items: [
      { keys: [AGGREGATE_KEYS], actions: ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'] },
      { keys: [PARAMETER_KEYS], actions: ['dynamodb:PutItem'] },
    ],
    indexes: ['due'],
    payloads: true,
    outputs: true,
    armsTimers: false,
  },
  // Partition state only: Query (load) and UpdateItem (enabled flag, cycle bookkeeping).
  distributor: {
    items: [{ keys: [PARTITION_STATE_KEY], actions: ['dynamodb:Query', 'dynamodb:UpdateItem'] }],
    indexes: [],
    payloads: false,
    outputs: false,
    armsTimers: false,
  },
};

/**
 * Grants each handler what {@link HANDLER_ACCESS} says; the fan-out, the partitions' depths and its
 * target queues; the distributor, the backlog and the partitions; and denies the fan-out fanin's
 * own inbound queues.
 */
export function grantHandlerAccess(
  fanin: FaninResources,
  definitions: readonly Definition[],
  extraTargetQueueArns: readonly string[],
): void {
  const { table, bucket, queues, replyPartitions, functions } = fanin;
  const { fanOut, distributor } = functions;
  // Each role allows what its handler's use cases call and nothing else (the call sites are
  // listed in docs/security.md; test/unit/infra/fanin-access.test.ts compares each policy action by
  // action). Consuming a queue is granted by its event source (CDK's consume grant).
  for (const [name, fn] of Object.entries(functions) as [keyof FaninFunctions, FaninFunction][]) {
    const access = HANDLER_ACCESS[name];
    for (const items of access.items) {
      // Fine-grained access: every item the call reads or writes (each item of a transaction)
      // has a partition key of this form. On the table only: an index query is keyed by the
      // index's own partition key, which these patterns do not describe.
      const operator = items.keys.some((k) => k.includes('*'))
        ? 'ForAllValues:StringLike'
        : 'ForAllValues:StringEquals';
      iam.Grant.addToPrincipal({
        grantee: fn,
        actions: [...items.actions],
        resourceArns: [table.tableArn],
        conditions: {
          [operator]: {
            'dynamodb:LeadingKeys': [...items.keys],
          },
        },
      });
    }
    if (access.indexes.length > 0) {
      iam.Grant.addToPrincipal({
        grantee: fn,
        actions: ['dynamodb:Query'],
        resourceArns: access.indexes.map((index) => `${table.tableArn}/index/${index}`),
      });
    }
    const payloads = s3.BucketGrants.fromBucket(bucket);
    if (access.payloads) {
      // Read what producers wrote; read and write stored bodies and large outputs.
      payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.INCOMING}*`, 's3:GetObject');
      payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.STATE}*`, ...PAYLOAD_ACTIONS);
      payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.OUTPUTS}*`, ...PAYLOAD_ACTIONS);
    }
    // Large sub-requests, for the responders to read.
    if (access.sendsRequests) {
      payloads.actionsOnObjectKeys(fn, `${PayloadPrefix.REQUESTS}*`, 's3:PutObject');
    }
    if (access.outputs) {
      for (const role of OUTPUT_ROLES) queues[role].queue.grants.sendMessages(fn);
      fanin.eventBus?.grantPutEventsTo(fn);
    }
    if (access.armsTimers) queues[QueueRole.TIMER].queue.grants.sendMessages(fn);
  }
  // The fan-out picks each aggregate's reply partition by availability: partition state (a
  // Query of the table) and each partition's depth.
  for (const partition of replyPartitions) {
    partition.queue.grants.actions(fanOut, ['sqs:GetQueueAttributes']);
  }
  // The distributor moves messages both ways between the backlog and the partitions (receive,
  // send, delete) and reads the partitions' depths; in the table it only touches the partition
  // state of the reply destination.
  for (const queue of [queues[QueueRole.BACKLOG].queue, ...replyPartitions.map((p) => p.queue)]) {
    queue.grants.consumeMessages(distributor);
    queue.grants.sendMessages(distributor);
  }
  const targetArns = [...fanOutTargetArns(Stack.of(fanin), definitions), ...extraTargetQueueArns];
  if (targetArns.length > 0) {
    // External queues known only by ARN (wildcards allowed): no queue object to grant on. The
    // sender resolves queue names with GetQueueUrl, then sends in batches (SendMessage).
    iam.Grant.addToPrincipal({
      grantee: fanOut,
      actions: ['sqs:SendMessage', 'sqs:GetQueueUrl'],
      resourceArns: [...new Set(targetArns)],
    });
  }
  // Cancellation notices and retries go where the sub-requests went, sent by whichever handler
  // completes the aggregate or takes its round of retries (a reply, a timer, the sweeper, a
  // control command): the targets of the definitions that opt in, and the extra targets when one
  // of them takes its recipients from the request.
  const cancelling = definitions.filter((d) => d.cancelOutstanding || d.responders?.retry !== undefined);
  const cancelArns = [
    ...fanOutTargetArns(Stack.of(fanin), cancelling),
    ...(cancelling.some((d) => d.fanOut?.type === 'recipient-list' && !d.fanOut.recipients)
      ? extraTargetQueueArns
      : []),
  ];
  if (cancelArns.length > 0) {
    for (const completer of [functions.reply, functions.timer, functions.sweeper, functions.control]) {
      iam.Grant.addToPrincipal({
        grantee: completer,
        actions: ['sqs:SendMessage', 'sqs:GetQueueUrl'],
        resourceArns: [...new Set(cancelArns)],
      });
    }
  }
  // A fan-out that runs out of time queues its own request again to ingress (the continuation
  // resumes from the recorded progress): the one send to an inbound queue the fan-out makes, so
  // the only one its role allows. SendMessage alone, on that one queue.
  iam.Grant.addToPrincipal({
    grantee: fanOut,
    actions: ['sqs:SendMessage'],
    resourceArns: [queues[QueueRole.INGRESS].queue.queueArn],
  });
  // A complete or purge of every aggregate of a definition (or of all) works page by page and
  // sends the rest on to the control queue with its cursor: SendMessage alone, on that one queue.
  // (No Deny names the control role; the fan-out's below is the fan-out's own, and
  // `controlSenders` always lets the control role through, infra/fanin.ts.)
  iam.Grant.addToPrincipal({
    grantee: functions.control,
    actions: ['sqs:SendMessage'],
    resourceArns: [queues[QueueRole.CONTROL].queue.queueArn],
  });
  // A recipient named in a request must never be one of fanin's own inbound queues (a forged
  // reply, a forged control command, a message put in a dead-letter queue to be redriven, all
  // sent with the fan-out's role), whatever a wildcard target ARN matches: the fan-out's role
  // refuses them outright. Ingress is not in this list (the continuation above needs it): a
  // recipient naming it (a request fanning out into requests, a loop) is refused at synth
  // for the targets the props name (an extra target pattern matching a fanin queue throws) and
  // at run time by the recipient policy (own queues are never recipients, shared/engine/recipients.ts),
  // as the outputs and the timer queue are, which the role sends to as well.
  fanOut.addToRolePolicy(
    new iam.PolicyStatement({
      sid: 'NeverSendToOwnInboundQueues',
      effect: iam.Effect.DENY,
      actions: ['sqs:SendMessage'],
      resources: [
        queues[QueueRole.CONTROL].queue.queueArn,
        queues[QueueRole.BACKLOG].queue.queueArn,
        ...replyPartitions.map((p) => p.queue.queueArn),
        ...[...Object.values(queues), ...replyPartitions].map((q) => q.deadLetterQueue.queueArn),
      ],
    }),
  );
}

/**
 * Who may send to the ingress queue, the reply partitions and the backlog (the props'
 * `ingressSenders` and `replySenders`), and who may write the bucket's prefixes fanin reads back or
 * sends out: fanin's own roles alone.
 */
export function restrictWriters(fanin: FaninResources, props: FaninProps): void {
  const { bucket, queues, replyPartitions, functions } = fanin;
  if (props.ingressSenders) {
    // The fan-out's continuation (its request queued again) is always let through.
    restrictSenders(queues[QueueRole.INGRESS].queue, props.ingressSenders, [functions.fanOut.role!.roleArn]);
  }
  if (props.replySenders) {
    for (const queue of [queues[QueueRole.BACKLOG].queue, ...replyPartitions.map((p) => p.queue)]) {
      restrictSenders(queue, props.replySenders, [functions.distributor.role!.roleArn]);
    }
  }
  // (the control queue's restriction is added with the external-event rules, infra/fanin.ts)
  const payloadRoles = (Object.keys(HANDLER_ACCESS) as (keyof FaninFunctions)[])
    .filter((name) => HANDLER_ACCESS[name].payloads)
    .map((name) => functions[name].role!.roleArn);
  // Producers write under incoming/ only; what fanin's state references (state/) and what it
  // sends (requests/, outputs/) is written by fanin's roles alone, whatever other principals'
  // IAM allows.
  bucket.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'OnlyFaninWritesStateAndOutputs',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: FANIN_WRITTEN_PREFIXES.map((prefix) => bucket.arnForObjects(`${prefix}*`)),
      conditions: { StringNotLike: { 'aws:PrincipalArn': payloadRoles } },
    }),
  );
}

/**
 * Adds to a queue's policy a `Deny` of `sqs:SendMessage` to every principal that is not one of the
 * senders (nor one of `alwaysRoles`, nor delivering for one of `alwaysSources`). The conditions of
 * one block are ANDed: the request is refused only if its principal ARN, its account and its source
 * ARN all fail to match; a key missing from the request (no source ARN for an IAM principal, no
 * principal ARN for a service) counts as not matching.
 */
export function restrictSenders(
  queue: sqs.Queue,
  senders: readonly FaninSender[],
  alwaysRoles: readonly string[],
  alwaysSources: readonly string[] = [],
): void {
  const principalArns = [...alwaysRoles];
  const accounts: string[] = [];
  const sources = [...alwaysSources];
  for (const sender of senders) {
    if (typeof sender !== 'string') principalArns.push(sender.roleArn);
    else if (ACCOUNT_ID.test(sender)) accounts.push(sender);
    else if (IAM_PRINCIPAL_ARN.test(sender)) principalArns.push(sender);
    else sources.push(sender);
  }
  queue.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'OnlyListedSenders',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sqs:SendMessage'],
      resources: [queue.queueArn],
      conditions: {
        ...(principalArns.length > 0 ? { StringNotLike: { 'aws:PrincipalArn': principalArns } } : {}),
        ...(accounts.length > 0 ? { StringNotEquals: { 'aws:PrincipalAccount': accounts } } : {}),
        ...(sources.length > 0 ? { ArnNotLike: { 'aws:SourceArn': sources } } : {}),
      },
    }),
  );
}

/** The ARNs of the queues the definitions fan out to (names in this account and region, or URLs). */
function fanOutTargetArns(stack: Stack, definitions: readonly Definition[]): string[] {
  const arns: string[] = [];
  for (const definition of definitions) {
    const fanOut = definition.fanOut;
    if (!fanOut) continue;
    const names =
      fanOut.type === 'splitter'
        ? [fanOut.target]
        : fanOut.type === 'recipient-list'
          ? (fanOut.recipients ?? [])
          : [];
    for (const target of names) {
      const url = QUEUE_URL.exec(target);
      if (url) {
        arns.push(`arn:${Aws.PARTITION}:sqs:${url[1]}:${url[2]}:${url[3]}`);
      } else {
        arns.push(stack.formatArn({ service: 'sqs', resource: target }));
      }
    }
  }
  return arns;
}

/**
 * Lets every handler use the customer managed key of the queues, the table, the bucket and the log
 * groups: the data-key and encrypt/decrypt calls SQS, DynamoDB and S3 make on its behalf (the
 * queues' own grants add theirs too). With a key of this stack, CloudWatch Logs may use it for the
 * log groups (an imported key's policy is its owner's).
 */
export function grantKeyUse(key: kms.IKey, functions: readonly FaninFunction[]): void {
  for (const fn of functions) {
    key.grant(fn, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey');
    for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
      Validations.of(fn.role!).acknowledge({
        id: `AwsSolutions-IAM5[Action::${action}]`,
        reason:
          "CDK's send grant on a queue encrypted with the customer managed key (encryptionKey) adds this action family, on that one key only.",
      });
    }
  }
  const region = Stack.of(key).region;
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'FaninLogGroups',
      principals: [new iam.ServicePrincipal(`logs.${region}.amazonaws.com`)],
      actions: ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey*', 'kms:ReEncrypt*', 'kms:Describe*'],
      resources: ['*'],
      conditions: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': Stack.of(key).formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        },
      },
    }),
    /* allowNoOp */ true,
  );
}

/**
 * The accounts whose events the external-event rules accept (`account` in their patterns): the
 * accounts `controlSenders` lists, and those of the IAM principals and roles it lists; without
 * `controlSenders`, fanin's own account only (as the control queue then takes any principal of
 * the account). An EventBridge rule sees the account that put the event, never its principal:
 * fencing one principal of an account from another takes the bus policy of
 * {@link fenceExternalEventBus}. An entry that is a source ARN (an SNS topic) sends no events.
 *
 * @throws Error when `controlSenders` names no account, principal or role: no event could pass.
 */
export function externalEventAccounts(stack: Stack, senders: readonly FaninSender[] | undefined): string[] {
  if (!senders) return [stack.account];
  const accounts = new Set<string>();
  for (const sender of senders) {
    if (typeof sender !== 'string') {
      accounts.add(sender.env.account);
      continue;
    }
    if (ACCOUNT_ID.test(sender)) accounts.add(sender);
    const principal = IAM_PRINCIPAL_ARN.exec(sender);
    if (principal?.[1] && ACCOUNT_ID.test(principal[1])) accounts.add(principal[1]);
  }
  if (accounts.size === 0) {
    throw new Error(
      `controlSenders names no account, IAM principal or role (given ${JSON.stringify(senders)}): the external-event rules would accept no event; list the accounts or roles that send them`,
    );
  }
  return [...accounts];
}

/**
 * The definition's pattern, matching only events put by the accounts allowed to send control
 * input ({@link externalEventAccounts}). A pattern that names `account` itself must name only
 * allowed accounts (it is kept as it is).
 *
 * @throws Error when the definition's own `account` names an account not allowed.
 */
export function fencedEventPattern(
  definition: Definition,
  accounts: readonly string[],
): Record<string, unknown> {
  const pattern = definition.externalEventPattern ?? {};
  const own = pattern.account;
  if (own === undefined) return { ...pattern, account: [...accounts] };
  const listed = Array.isArray(own) ? own : [own];
  const foreign = listed.filter((a) => typeof a !== 'string' || !accounts.includes(a));
  if (foreign.length > 0) {
    throw new Error(
      `definition "${definition.name}": externalEventPattern.account names ${JSON.stringify(foreign)}, which controlSenders does not allow (allowed: ${JSON.stringify(accounts)})`,
    );
  }
  return pattern;
}

/**
 * On a bus of this app, a `Deny` of `events:PutEvents` of an event whose `source` is one the
 * external-event rules match, to every principal `controlSenders` does not list: the fence by
 * principal that a rule's pattern cannot express. The sources come from the patterns' plain
 * `source` lists; a pattern whose `source` is not a list of strings (a prefix match) cannot be
 * fenced this way, and the construct says so (a warning). An imported bus, or the default bus,
 * is its owner's to fence (docs/security.md).
 *
 * @returns false when the bus is not of this app (nothing was added).
 */
export function fenceExternalEventBus(
  bus: events.IEventBus,
  senders: readonly FaninSender[],
  definitions: readonly Definition[],
): boolean {
  const owned = bus as Partial<events.EventBus>;
  if (typeof owned.addToResourcePolicy !== 'function') return false;
  const sources = new Set<string>();
  for (const definition of definitions) {
    const source = definition.externalEventPattern?.source;
    if (!Array.isArray(source) || !source.every((s) => typeof s === 'string')) {
      if (definition.externalEventPattern) {
        Annotations.of(bus).addWarningV2(
          'fanin:externalEventSourceUnfenced',
          `definition "${definition.name}": its externalEventPattern.source is not a list of plain strings, so the bus policy cannot fence who puts its events; only the rule's account filter applies`,
        );
      }
      continue;
    }
    for (const s of source) sources.add(s);
  }
  if (sources.size === 0) return false;
  const principalArns: string[] = [];
  const accounts: string[] = [];
  for (const sender of senders) {
    if (typeof sender !== 'string') principalArns.push(sender.roleArn);
    else if (ACCOUNT_ID.test(sender)) accounts.push(sender);
    else if (IAM_PRINCIPAL_ARN.test(sender)) principalArns.push(sender);
  }
  const result = owned.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'OnlyControlSendersPutExternalEvents',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['events:PutEvents'],
      resources: [bus.eventBusArn],
      conditions: {
        StringEquals: { 'events:source': [...sources].sort() },
        ...(principalArns.length > 0 ? { StringNotLike: { 'aws:PrincipalArn': principalArns } } : {}),
        ...(accounts.length > 0 ? { StringNotEquals: { 'aws:PrincipalAccount': accounts } } : {}),
      },
    }),
  );
  return result.statementAdded;
}
