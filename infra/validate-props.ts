import { Annotations, type Duration, RemovalPolicy, type Stack, Token } from 'aws-cdk-lib';
import type { Definition } from '../shared/engine/definition.ts';
import { LOG_LEVELS } from '../shared/observability/metric-names.ts';
import type { Topology } from '../shared/topology/topology.ts';
import { checkEnvironmentSize } from './environment-check.ts';
import type { FaninProps } from './fanin-props.ts';
import { MAX_RETENTION_SECONDS } from './fanin-queue.ts';
import { validateOptions } from './validate-options.ts';

/**
 * The checks of {@link FaninProps} at construction, as aws-sqs keeps its own in
 * `validate-queue-props.ts`: {@link validateProps} on the props alone (a table of rules) before
 * the topology is described, then {@link validateAgainstTopology} on the props against the
 * topology, the definitions and the stack (it also runs infra/validate-options.ts's checks of the
 * construct options and infra/environment-check.ts's bound on the handlers' environment). Every
 * message names the value it was given.
 */

/** The SQS Extended Client's threshold (256 KiB), a size every SQS queue accepts. */
const MAX_CLAIM_CHECK_THRESHOLD = 262_144;
/** An SQS queue name, standard or FIFO. */
const QUEUE_NAME = /^[A-Za-z0-9_-]{1,80}$|^[A-Za-z0-9_-]{1,75}\.fifo$/;
/** An SQS queue URL: region, account and name. */
export const QUEUE_URL =
  /^https:\/\/sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?\/(\d{12})\/([A-Za-z0-9_.-]{1,80})$/;
/** An SQS queue ARN; `*` and `?` allowed in the name. */
const QUEUE_ARN = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.*?-]{1,80}$/;
export const ACCOUNT_ID = /^\d{12}$/;
/** An IAM user or role ARN (or an account's root), as `aws:PrincipalArn` holds it; wildcards allowed. */
export const IAM_PRINCIPAL_ARN = /^arn:aws[a-z-]*:iam::(\d{12}|[*?]+):(root|(role|user)\/[\w+=,.@/*?-]+)$/;
/** The ARN of a resource a service delivers for (`aws:SourceArn`): an SNS topic, an EventBridge rule... */
const SOURCE_ARN = /^arn:aws[a-z-]*:(?!iam:|sts:)[a-z0-9-]+:[a-z0-9-]*:(\d{12})?:.+$/;
const DAY_SECONDS = 24 * 3600;

interface Rule {
  readonly ok: (props: FaninProps) => boolean;
  readonly message: (props: FaninProps) => string;
}

const whole = (d: Duration, unit: 'seconds' | 'days'): number =>
  unit === 'seconds' ? d.toSeconds({ integral: false }) : d.toDays({ integral: false });

/**
 * Rules on the props alone; topology options (prefix, partitions, receives, partitioning values and
 * their order) are checked by describeTopology, whose messages also name the value received.
 */
const RULES: readonly Rule[] = [
  {
    ok: (p) => Array.isArray(p.definitions) && p.definitions.length > 0,
    message: (p) =>
      `definitions must hold at least one definition (given ${p.definitions?.length ?? 'nothing'})`,
  },
  {
    ok: (p) => {
      if (p.functionTimeout === undefined) return true;
      const s = whole(p.functionTimeout, 'seconds');
      return Number.isInteger(s) && s >= 1 && s <= 900;
    },
    message: (p) =>
      `functionTimeout must be a whole number of seconds between 1 and 900 inclusive (given ${p.functionTimeout?.toHumanString()})`,
  },
  {
    ok: (p) =>
      p.functionMemorySize === undefined ||
      (Number.isInteger(p.functionMemorySize) &&
        p.functionMemorySize >= 128 &&
        p.functionMemorySize <= 10240),
    message: (p) =>
      `functionMemorySize must be an integer between 128 and 10240 MiB inclusive (given ${p.functionMemorySize})`,
  },
  {
    ok: (p) => {
      if (p.payloadExpiration === undefined) return true;
      const days = whole(p.payloadExpiration, 'days');
      return Number.isInteger(days) && days >= 1;
    },
    message: (p) =>
      `payloadExpiration must be a whole number of days, at least 1 (given ${p.payloadExpiration?.toHumanString()})`,
  },
  {
    ok: (p) => p.dlqRetention === undefined || whole(p.dlqRetention, 'seconds') === MAX_RETENTION_SECONDS,
    message: (p) =>
      `dlqRetention must be 14 days, the retention of every fanin queue and DLQ, so that a failed message can be redriven within the window its aggregate's tombstone covers; leave it unset (given ${p.dlqRetention?.toHumanString()})`,
  },
  {
    ok: (p) =>
      p.replyDepthAlarmThreshold === undefined ||
      (Number.isInteger(p.replyDepthAlarmThreshold) && p.replyDepthAlarmThreshold >= 1),
    message: (p) =>
      `replyDepthAlarmThreshold must be an integer of at least 1 (given ${p.replyDepthAlarmThreshold})`,
  },
  {
    // EventBridge rate schedules are whole minutes (CDK refuses `rate(90 seconds)`); rounding up
    // would silently run the distributor less often than asked, so the value is refused instead.
    ok: (p) => {
      const interval = p.partitioning?.distributorIntervalSeconds;
      return interval === undefined || (Number.isInteger(interval) && interval >= 60 && interval % 60 === 0);
    },
    message: (p) =>
      `partitioning.distributorIntervalSeconds must be a whole number of minutes in seconds (60, 120, ...): it becomes an EventBridge rate schedule (given ${p.partitioning?.distributorIntervalSeconds})`,
  },
  {
    ok: (p) =>
      p.claimCheckThreshold === undefined ||
      (Number.isInteger(p.claimCheckThreshold) &&
        p.claimCheckThreshold >= 1 &&
        p.claimCheckThreshold <= MAX_CLAIM_CHECK_THRESHOLD),
    message: (p) =>
      `claimCheckThreshold must be an integer between 1 and ${MAX_CLAIM_CHECK_THRESHOLD} bytes inclusive (given ${p.claimCheckThreshold})`,
  },
  {
    // Levels above ERROR drop the error lines the use cases' alarms count (infra/use-case-alarms.ts).
    ok: (p) =>
      p.logLevel === undefined ||
      (LOG_LEVELS.includes(p.logLevel) && p.logLevel !== 'CRITICAL' && p.logLevel !== 'SILENT'),
    message: (p) =>
      `logLevel must be one of TRACE, DEBUG, INFO, WARN, ERROR (above ERROR the use cases' alarms would no longer see the error lines they count) (given ${JSON.stringify(p.logLevel)})`,
  },
  {
    ok: (p) =>
      p.durationAlarmPercent === undefined ||
      (Number.isFinite(p.durationAlarmPercent) &&
        p.durationAlarmPercent >= 1 &&
        p.durationAlarmPercent <= 100),
    message: (p) =>
      `durationAlarmPercent must be between 1 and 100 inclusive (given ${p.durationAlarmPercent})`,
  },
  {
    ok: (p) => {
      if (p.completionLatencyAlarm === undefined) return true;
      const s = whole(p.completionLatencyAlarm, 'seconds');
      return Number.isInteger(s) && s >= 1;
    },
    message: (p) =>
      `completionLatencyAlarm must be a whole number of seconds, at least 1 (given ${p.completionLatencyAlarm?.toHumanString()})`,
  },
  {
    ok: (p) => p.removalPolicy !== RemovalPolicy.SNAPSHOT,
    message: () =>
      'removalPolicy must be RETAIN, RETAIN_ON_UPDATE_OR_DELETE or DESTROY: the table, bucket and log groups have no snapshot (given snapshot)',
  },
  {
    ok: (p) => !(p.autoDeleteObjects && (p.removalPolicy ?? RemovalPolicy.RETAIN) !== RemovalPolicy.DESTROY),
    message: (p) =>
      `autoDeleteObjects needs removalPolicy RemovalPolicy.DESTROY (given ${p.removalPolicy ?? 'the default, retain'})`,
  },
  {
    ok: (p) => !(p.eventBus && p.createEventBus),
    message: () =>
      'eventBus and createEventBus cannot both be given (given an eventBus and createEventBus: true)',
  },
  ...(['ingressSenders', 'replySenders', 'controlSenders'] as const).map(
    (key): Rule => ({
      ok: (p) => (p[key] ?? []).every((sender) => typeof sender !== 'string' || validSender(sender)),
      message: (p) =>
        `${key} must be 12-digit account ids, IAM role or user ARNs (wildcards allowed), source ARNs (an SNS topic, an EventBridge rule) or roles; a deploy-time string cannot be classified, pass the role itself (given ${JSON.stringify(
          (p[key] ?? []).filter((sender) => typeof sender === 'string' && !validSender(sender)),
        )})`,
    }),
  ),
  {
    ok: (p) => (p.recipientAccounts ?? []).every((a) => typeof a === 'string' && ACCOUNT_ID.test(a)),
    message: (p) =>
      `recipientAccounts must be 12-digit AWS account ids, known at synth (given ${JSON.stringify(
        (p.recipientAccounts ?? []).filter((a) => typeof a !== 'string' || !ACCOUNT_ID.test(a)),
      )})`,
  },
  {
    ok: (p) => (p.extraTargetQueueArns ?? []).every((arn) => Token.isUnresolved(arn) || QUEUE_ARN.test(arn)),
    message: (p) =>
      `extraTargetQueueArns must be SQS queue ARNs such as arn:aws:sqs:us-east-1:123456789012:bank-a (given ${JSON.stringify(
        (p.extraTargetQueueArns ?? []).filter((arn) => !Token.isUnresolved(arn) && !QUEUE_ARN.test(arn)),
      )})`,
  },
];

const NUMERIC_TOKENS: readonly (keyof FaninProps)[] = [
  'replyPartitions',
  'maxReceiveCount',
  'functionMemorySize',
  'replyDepthAlarmThreshold',
  'claimCheckThreshold',
];

/** Checks the props alone; throws on the first rule broken. */
export function validateProps(props: FaninProps): void {
  // Numbers that shape resources, schedules or the bundle's environment must be known at synth.
  const numbers: [string, unknown][] = [
    ...NUMERIC_TOKENS.map((key): [string, unknown] => [key, props[key]]),
    ...Object.entries(props.partitioning ?? {}).map(([key, value]): [string, unknown] => [
      `partitioning.${key}`,
      value,
    ]),
  ];
  for (const [key, value] of numbers) {
    if (typeof value === 'number' && Token.isUnresolved(value)) {
      throw new Error(
        `${key} must be known at synth, not a deploy-time token (given ${Token.asString(value)})`,
      );
    }
  }
  for (const rule of RULES) {
    if (!rule.ok(props)) throw new Error(rule.message(props));
  }
}

function validSender(sender: string): boolean {
  return (
    !Token.isUnresolved(sender) &&
    (ACCOUNT_ID.test(sender) || IAM_PRINCIPAL_ARN.test(sender) || SOURCE_ARN.test(sender))
  );
}

/**
 * The payload bucket's expiration in days: the prop, or the shortest allowed. Aggregate state may
 * reference a stored body for `topology.stateLifeSeconds`; a day more covers the lifecycle's own
 * granularity (S3 rounds an expiration to the next midnight UTC) and clocks.
 */
function payloadExpirationDays(topology: Topology, props: FaninProps): number {
  const minimum = Math.ceil(topology.stateLifeSeconds / DAY_SECONDS) + 1;
  if (props.payloadExpiration === undefined) return minimum;
  const days = whole(props.payloadExpiration, 'days');
  if (days < minimum) {
    throw new Error(
      `payloadExpiration must be at least ${minimum} days: aggregate state may reference a stored body for ${topology.stateLifeSeconds} s (unknown-reply timeout, open time, completion lease and tombstone retention of the longest-lived definition), plus a day (given ${props.payloadExpiration.toHumanString()})`,
    );
  }
  return days;
}

/**
 * Request-time recipients go only to queues of fanin's own account and region, or of
 * `recipientAccounts` (in fanin's region): an extra target ARN elsewhere would grant what the
 * runtime refuses. Checked where the stack's account and region are known at synth.
 */
function validateTargetsAgainstAccounts(stack: Stack, props: FaninProps): void {
  const allowed = new Set(props.recipientAccounts ?? []);
  const ownAccount = Token.isUnresolved(stack.account) ? undefined : stack.account;
  const ownRegion = Token.isUnresolved(stack.region) ? undefined : stack.region;
  for (const arn of props.extraTargetQueueArns ?? []) {
    if (Token.isUnresolved(arn)) continue;
    const [, , , region, account] = arn.split(':');
    const accountOk = allowed.has(account ?? '') || ownAccount === undefined || account === ownAccount;
    const regionOk = ownRegion === undefined || region === ownRegion;
    if (!accountOk || !regionOk) {
      throw new Error(
        `extraTargetQueueArns must name queues of fanin's own account${ownAccount ? ` (${ownAccount})` : ''} or of recipientAccounts, in fanin's region${ownRegion ? ` (${ownRegion})` : ''} (given ${arn})`,
      );
    }
    if (ownAccount === undefined && !allowed.has(account ?? '')) {
      Annotations.of(stack).addInfo(
        `fanin: extraTargetQueueArns entry ${arn} is usable for request-time recipients only if ${account} is the deployment account or is listed in recipientAccounts`,
      );
    }
  }
}

/**
 * An extra target pattern must not match one of fanin's own queues (in fanin's account): the
 * fan-out may send to its timer and output queues, so a request naming one as a recipient would
 * forge a timer or an output with fanin's own role. (The inbound queues are denied in the role.)
 */
function validateTargetsAgainstOwnQueues(topology: Topology, props: FaninProps): void {
  const own = [...Object.values(topology.queues), ...topology.replyPartitions].flatMap((q) => [
    q.name,
    q.dlqName,
  ]);
  const foreign = new Set(props.recipientAccounts ?? []);
  for (const arn of props.extraTargetQueueArns ?? []) {
    if (Token.isUnresolved(arn)) continue;
    const [, , , , account, name = ''] = arn.split(':');
    if (foreign.has(account ?? '')) continue;
    const pattern = new RegExp(
      `^${name
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
    );
    const hit = own.filter((queue) => pattern.test(queue));
    if (hit.length > 0) {
      throw new Error(
        `extraTargetQueueArns must not match fanin's own queues (${hit.join(', ')}): a request naming one as a recipient would forge a message with the fan-out's role (given ${arn})`,
      );
    }
  }
}

function validateDefinitionsAgainstProps(definitions: readonly Definition[], props: FaninProps): void {
  const needBus = definitions.filter((d) => d.outputs.eventBridge).map((d) => d.name);
  if (needBus.length > 0 && props.createEventBus === false && !props.eventBus) {
    throw new Error(
      `definitions ${JSON.stringify(needBus)} emit to EventBridge, so an output bus is needed: pass eventBus or leave createEventBus unset (given createEventBus: false)`,
    );
  }
  for (const definition of definitions) {
    const fanOut = definition.fanOut;
    if (!fanOut || fanOut.type === 'none') continue;
    const names = fanOut.type === 'splitter' ? [fanOut.target] : (fanOut.recipients ?? []);
    for (const name of names) {
      if (!QUEUE_NAME.test(name) && !QUEUE_URL.test(name)) {
        throw new Error(
          `definition "${definition.name}": a fan-out target must be an SQS queue name or URL (given "${name}")`,
        );
      }
    }
  }
}

/**
 * Checks the props against the topology they describe, its definitions and the stack, then the
 * construct options (infra/validate-options.ts) and the handlers' environment size
 * (infra/environment-check.ts), in that order. Returns the payload bucket's expiration in days.
 */
export function validateAgainstTopology(
  stack: Stack,
  topology: Topology,
  props: FaninProps,
  eventBusName: string | undefined,
): number {
  validateDefinitionsAgainstProps([...topology.definitions.values()], props);
  validateTargetsAgainstAccounts(stack, props);
  validateTargetsAgainstOwnQueues(topology, props);
  const expirationDays = payloadExpirationDays(topology, props);
  validateOptions(topology, props);
  checkEnvironmentSize(topology, {
    ...(eventBusName !== undefined ? { eventBusName } : {}),
    ...(props.claimCheckThreshold !== undefined
      ? { claimCheckThresholdBytes: props.claimCheckThreshold }
      : {}),
    ...(props.recipientAccounts !== undefined ? { recipientAccounts: props.recipientAccounts } : {}),
    ...(props.table ? { tableName: props.table.tableName } : {}),
    serviceName: topology.prefix,
    tracing: props.tracing ?? false,
    ...(props.logLevel !== undefined ? { logLevel: props.logLevel } : {}),
  });
  return expirationDays;
}
