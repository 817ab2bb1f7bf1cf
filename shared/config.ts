import { z } from 'zod';
import { type Definition, parseDefinitions } from './engine/definition.ts';
import { FaninError } from './errors.ts';
import {
  type Partitioning,
  type PartitioningOptions,
  type QueueRole,
  QueueRole as Roles,
  resolvePartitioning,
} from './topology/topology.ts';

/**
 * The environment contract between the deployment (CDK stack or local runtime) and the handlers.
 * The CDK stack sets these on each function; the local runtime sets them in its own process.
 */
export const ConfigEnv = {
  /** DynamoDB table of aggregate state. */
  TABLE: 'FANIN_TABLE',
  /** JSON object: queue role → queue URL (see QueueRole). */
  QUEUES: 'FANIN_QUEUES',
  /** JSON array: reply partition queue URLs, in partition order. */
  REPLY_QUEUES: 'FANIN_REPLY_QUEUES',
  /** JSON array of aggregation definitions (inlined at bundle time in Lambda, so no 4 KB env limit). */
  DEFINITIONS: 'FANIN_DEFINITIONS',
  /** Optional EventBridge bus for outputs of definitions with `outputs.eventBridge`. */
  EVENT_BUS: 'FANIN_EVENT_BUS',
  /** Optional S3 bucket of the claim-check path (large payloads). Without it large payloads are refused. */
  BUCKET: 'FANIN_BUCKET',
  /** JSON: the reply destination's partitioning (highThreshold, watermarks, stallSeconds). */
  PARTITIONING: 'FANIN_PARTITIONING',
  /** Message size (bytes) above which a payload takes the claim-check path. @default 262,144 */
  CLAIM_CHECK_THRESHOLD: 'FANIN_CLAIM_CHECK_THRESHOLD',
  /**
   * How long a completing invocation owns an aggregate before a resumer may take it over, in
   * seconds; derived from the function timeout (see `completionLeaseSeconds` in the topology).
   */
  LEASE_SECONDS: 'FANIN_LEASE_SECONDS',
  /**
   * JSON array of AWS account ids whose queue URLs a request may name as recipients, besides the
   * account of fanin's own queues. Names are always resolved in fanin's own account and region.
   */
  RECIPIENT_ACCOUNTS: 'FANIN_RECIPIENT_ACCOUNTS',
  /**
   * JSON array of the SQS senders (`SenderId`) of fanin's movers (on AWS, the distributor role's
   * unique id): only a copy one of them sent keeps a moved reply's first send time
   * (`fanin-origin-sent-at`). Unset: none is trusted, a moved reply arrives when it was moved.
   */
  TRUSTED_MOVERS: 'FANIN_TRUSTED_MOVERS',
} as const;

/** What every handler needs to know about its deployment. */
export interface RuntimeConfig {
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<QueueRole, string>>;
  readonly replyQueueUrls: readonly string[];
  readonly definitions: ReadonlyMap<string, Definition>;
  readonly eventBusName?: string;
  readonly bucketName?: string;
  readonly claimCheckThresholdBytes?: number;
  /** @default the topology's defaults */
  readonly partitioning?: Partitioning;
  /** @default 120 (a 30 s function timeout's lease) */
  readonly completionLeaseSeconds?: number;
  /** Accounts (besides fanin's own) whose queues a request-time recipient URL may name. @default none */
  readonly recipientAccounts?: readonly string[];
  /** The SQS senders whose moved copies keep a reply's first send time. @default none */
  readonly trustedMovers?: readonly string[];
}

/** Thrown when the deployment's environment is incomplete: a deployment error, not a message error. */
export class ConfigurationError extends FaninError {
  public constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** Each queue role's URL; other keys are kept. */
const QueueUrlsSchema = z.looseObject(
  Object.fromEntries(Object.values(Roles).map((role) => [role, z.string()])) as Record<
    QueueRole,
    z.ZodString
  >,
);
const ReplyQueueUrlsSchema = z.array(z.string()).min(1);
const DefinitionsSchema = z.array(z.unknown());
/** Optional partitioning settings; their values are checked by {@link resolvePartitioning}. */
const PartitioningSchema = z.record(z.string(), z.unknown());
/** A positive integer given as text (an empty variable is no value). */
const PositiveIntegerText = z.coerce.number().pipe(z.int().positive());
const AccountsSchema = z.array(z.string().regex(/^\d{12}$/));
/** An IAM unique id (a user's, or a role's with an optional `:session`), as SQS gives `SenderId`. */
const SendersSchema = z.array(z.string().regex(/^[\w+=,.@:-]{1,193}$/));

/**
 * Reads the runtime configuration from the environment. Throws {@link ConfigurationError} naming
 * the variable that is missing or malformed.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const tableName = required(env, ConfigEnv.TABLE);
  const queues = check(QueueUrlsSchema, json(env, ConfigEnv.QUEUES), (issue) =>
    issue.path.length > 0
      ? `${ConfigEnv.QUEUES} has no URL for queue role "${String(issue.path[0])}"`
      : `${ConfigEnv.QUEUES} must be a JSON object of queue URLs by role`,
  );
  const replies = check(
    ReplyQueueUrlsSchema,
    json(env, ConfigEnv.REPLY_QUEUES),
    () => `${ConfigEnv.REPLY_QUEUES} must be a non-empty JSON array of queue URLs`,
  );
  const definitions = check(
    DefinitionsSchema,
    json(env, ConfigEnv.DEFINITIONS),
    () => `${ConfigEnv.DEFINITIONS} must be a JSON array`,
  );
  const eventBusName = env[ConfigEnv.EVENT_BUS];
  const threshold = positiveInteger(env, ConfigEnv.CLAIM_CHECK_THRESHOLD);
  const lease = positiveInteger(env, ConfigEnv.LEASE_SECONDS);
  const accounts = env[ConfigEnv.RECIPIENT_ACCOUNTS]
    ? check(
        AccountsSchema,
        json(env, ConfigEnv.RECIPIENT_ACCOUNTS),
        () => `${ConfigEnv.RECIPIENT_ACCOUNTS} must be a JSON array of 12-digit account ids`,
      )
    : [];
  const movers = env[ConfigEnv.TRUSTED_MOVERS]
    ? check(
        SendersSchema,
        json(env, ConfigEnv.TRUSTED_MOVERS),
        () => `${ConfigEnv.TRUSTED_MOVERS} must be a JSON array of SQS sender ids`,
      )
    : [];
  const partitioning = env[ConfigEnv.PARTITIONING]
    ? check(
        PartitioningSchema,
        json(env, ConfigEnv.PARTITIONING),
        () => `${ConfigEnv.PARTITIONING} must be a JSON object`,
      )
    : {};
  return {
    tableName,
    queueUrls: queues,
    replyQueueUrls: replies,
    definitions: parseDefinitions(definitions),
    ...(eventBusName ? { eventBusName } : {}),
    ...(env[ConfigEnv.BUCKET] ? { bucketName: env[ConfigEnv.BUCKET] } : {}),
    partitioning: resolvePartitioning(partitioning as PartitioningOptions),
    ...(threshold !== undefined ? { claimCheckThresholdBytes: threshold } : {}),
    ...(lease !== undefined ? { completionLeaseSeconds: lease } : {}),
    ...(accounts.length > 0 ? { recipientAccounts: accounts } : {}),
    ...(movers.length > 0 ? { trustedMovers: movers } : {}),
  };
}

/** The environment that {@link loadConfig} reads back, for the local runtime and tests. */
export function configToEnv(config: {
  tableName: string;
  queueUrls: Readonly<Record<QueueRole, string>>;
  replyQueueUrls: readonly string[];
  definitions: readonly unknown[];
  eventBusName?: string;
  bucketName?: string;
  claimCheckThresholdBytes?: number;
  partitioning?: PartitioningOptions;
  completionLeaseSeconds?: number;
  recipientAccounts?: readonly string[];
  trustedMovers?: readonly string[];
}): Record<string, string> {
  return {
    [ConfigEnv.TABLE]: config.tableName,
    [ConfigEnv.QUEUES]: JSON.stringify(config.queueUrls),
    [ConfigEnv.REPLY_QUEUES]: JSON.stringify(config.replyQueueUrls),
    [ConfigEnv.DEFINITIONS]: JSON.stringify(config.definitions),
    ...(config.eventBusName ? { [ConfigEnv.EVENT_BUS]: config.eventBusName } : {}),
    ...(config.bucketName ? { [ConfigEnv.BUCKET]: config.bucketName } : {}),
    ...(config.partitioning ? { [ConfigEnv.PARTITIONING]: JSON.stringify(config.partitioning) } : {}),
    ...(config.claimCheckThresholdBytes !== undefined
      ? { [ConfigEnv.CLAIM_CHECK_THRESHOLD]: String(config.claimCheckThresholdBytes) }
      : {}),
    ...(config.completionLeaseSeconds !== undefined
      ? { [ConfigEnv.LEASE_SECONDS]: String(config.completionLeaseSeconds) }
      : {}),
    ...(config.recipientAccounts && config.recipientAccounts.length > 0
      ? { [ConfigEnv.RECIPIENT_ACCOUNTS]: JSON.stringify(config.recipientAccounts) }
      : {}),
    ...(config.trustedMovers && config.trustedMovers.length > 0
      ? { [ConfigEnv.TRUSTED_MOVERS]: trustedMoversValue(config.trustedMovers) }
      : {}),
  };
}

/**
 * The value of {@link ConfigEnv.TRUSTED_MOVERS} that {@link loadConfig} reads back (a JSON array):
 * for the stack, which sets it on each function once the distributor's role exists.
 */
export function trustedMoversValue(movers: readonly string[]): string {
  return JSON.stringify(movers);
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (!value) throw new ConfigurationError(`${name} is not set`);
  return value;
}

/** The value `schema` makes of `value`, or a {@link ConfigurationError} with the message of its first issue. */
function check<T>(schema: z.ZodType<T>, value: unknown, message: (issue: z.core.$ZodIssue) => string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new ConfigurationError(message(result.error.issues[0] as z.core.$ZodIssue));
}

/** An optional positive integer variable; unset or empty is undefined. */
function positiveInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const text = env[name];
  if (!text) return undefined;
  return check(PositiveIntegerText, text, () => `${name} must be a positive integer (given "${text}")`);
}

function json(env: NodeJS.ProcessEnv, name: string): unknown {
  const text = required(env, name);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`${name} is not valid JSON: ${(error as Error).message}`);
  }
}
