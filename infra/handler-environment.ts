import { Token } from 'aws-cdk-lib';
import { ConfigEnv, configToEnv, trustedMoversValue } from '../shared/config.ts';
import { ObservabilityEnv } from '../shared/observability/metric-names.ts';
import { type Partitioning, QueueRole, type Topology } from '../shared/topology/topology.ts';
import { FUNCTION_ENVIRONMENT } from './fanin-function.ts';

/** Lambda refuses a function whose environment variables add up to more than 4 KB. */
export const LAMBDA_ENV_LIMIT_BYTES = 4096;

/**
 * Room the synth check keeps below {@link LAMBDA_ENV_LIMIT_BYTES}: Lambda does not document how it
 * counts the 4 KB, an emulator's host name may be a little longer than its default, and a variable
 * added by a later version of the stack must not turn a deployment that passed into one that fails.
 */
export const ENV_MARGIN_BYTES = 256;

/** The most the handlers' environment may take at synth: Lambda's limit less the margin. */
export const ENV_BUDGET_BYTES = LAMBDA_ENV_LIMIT_BYTES - ENV_MARGIN_BYTES;

/**
 * The longest queue URL prefixes the handlers can be given: on AWS, a 14-character region name and
 * the China partition's domain (`amazonaws.com.cn`, longer than the commercial, GovCloud and ISO
 * ones); on LocalStack (its default `SQS_ENDPOINT_STRATEGY=standard`), plain HTTP, the
 * `localhost.localstack.cloud` domain and the port, 14 characters longer. Queue URLs are deploy-time
 * values, so the size check assumes the longest of them for every queue.
 */
export const QUEUE_URL_PREFIXES = {
  aws: 'https://sqs.cn-northwest-1.amazonaws.com.cn/123456789012/',
  localstack: 'http://sqs.cn-northwest-1.localhost.localstack.cloud:4566/123456789012/',
} as const;

/** The longest of {@link QUEUE_URL_PREFIXES}: what the size check assumes for every queue URL. */
export const LONGEST_QUEUE_URL_PREFIX: string = Object.values(QUEUE_URL_PREFIXES).reduce((a, b) =>
  b.length > a.length ? b : a,
);

/** S3's longest bucket name: the bucket is named by CloudFormation, so its length is unknown at synth. */
const LONGEST_BUCKET_NAME = 63;
/**
 * The length of an IAM role's unique id as AWS generates it (`AROA` and 17 characters; LocalStack's
 * are alike), for the distributor role's id in `FANIN_TRUSTED_MOVERS`, a deploy-time value. IAM's
 * API allows up to 128: a longer id would take from {@link ENV_MARGIN_BYTES}.
 */
const LONGEST_ROLE_ID = 21;
/** DynamoDB's longest table name, for a table whose name is a deploy-time value. */
const LONGEST_TABLE_NAME = 255;
/** EventBridge's longest bus name, for a bus whose name is a deploy-time value. */
const LONGEST_BUS_NAME = 256;

/** What the handlers' environment is made of: tokens for the functions, known strings for the size check. */
export interface HandlerEnvironmentValues {
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<QueueRole, string>>;
  readonly replyQueueUrls: readonly string[];
  readonly bucketName: string;
  readonly eventBusName?: string;
  readonly partitioning: Partitioning;
  readonly claimCheckThresholdBytes?: number;
  /** How long a completing invocation owns an aggregate (`topology.completionLeaseSeconds`). */
  readonly completionLeaseSeconds: number;
  /** Accounts whose queue URLs a request may name as recipients. */
  readonly recipientAccounts?: readonly string[];
  /** `POWERTOOLS_SERVICE_NAME`: the `service` dimension of the metrics and the X-Ray service name. */
  readonly serviceName: string;
  /** `POWERTOOLS_TRACE_ENABLED=true`: the handlers' Powertools Tracer is on. @default false */
  readonly tracing?: boolean;
  /** `POWERTOOLS_LOG_LEVEL`: the handlers' log level. @default - not set (Powertools' INFO) */
  readonly logLevel?: string;
}

/** What the size bound needs besides the topology: the values the stack knows at synth. */
export interface EnvironmentOptions {
  /** The output bus name when there is a bus (a token counts as EventBridge's longest name). */
  readonly eventBusName?: string;
  readonly claimCheckThresholdBytes?: number;
  readonly recipientAccounts?: readonly string[];
  /** The state table's name when it is not the topology's (a table given to the construct; a token counts as DynamoDB's longest name). */
  readonly tableName?: string;
  /** The Powertools service name (the stack's prefix). @default the topology's prefix */
  readonly serviceName?: string;
  /** Whether `POWERTOOLS_TRACE_ENABLED` is set. @default false */
  readonly tracing?: boolean;
  /** `POWERTOOLS_LOG_LEVEL`, when set. @default - not set */
  readonly logLevel?: string;
}

/**
 * The handlers' environment: the runtime configuration contract of `shared/config.ts`, encoded by
 * its own `configToEnv`, so the stack and `loadConfig` cannot disagree on a name or an encoding,
 * and the Powertools variables of `shared/observability/metric-names.ts`. The definitions are left
 * out: each handler asset carries them in its `definitions.mjs` (see infra/handler-code.ts).
 *
 * Token values may go through `JSON.stringify`: a token is a marker string with nothing to escape,
 * and CDK turns a string holding markers into `Fn::Join` (queue URLs need no JSON escaping either).
 */
export function handlerEnvironment(values: HandlerEnvironmentValues): Record<string, string> {
  const { [ConfigEnv.DEFINITIONS]: _inBundle, ...environment } = configToEnv({
    tableName: values.tableName,
    queueUrls: values.queueUrls,
    replyQueueUrls: values.replyQueueUrls,
    definitions: [],
    bucketName: values.bucketName,
    partitioning: values.partitioning,
    ...(values.eventBusName !== undefined ? { eventBusName: values.eventBusName } : {}),
    ...(values.claimCheckThresholdBytes !== undefined
      ? { claimCheckThresholdBytes: values.claimCheckThresholdBytes }
      : {}),
    completionLeaseSeconds: values.completionLeaseSeconds,
    ...(values.recipientAccounts !== undefined ? { recipientAccounts: values.recipientAccounts } : {}),
  });
  return {
    ...environment,
    [ObservabilityEnv.SERVICE_NAME]: values.serviceName,
    ...(values.tracing ? { [ObservabilityEnv.TRACE_ENABLED]: 'true' } : {}),
    ...(values.logLevel !== undefined ? { [ObservabilityEnv.LOG_LEVEL]: values.logLevel } : {}),
  };
}

/**
 * The handlers' environment with the longest value each deploy-time name can take (queue URLs of
 * the longest form, {@link LONGEST_QUEUE_URL_PREFIX}, a 63-character bucket name, a 256-character bus name when the bus's name is
 * a token), and the values known at synth (the lease, the recipient accounts), plus
 * {@link FUNCTION_ENVIRONMENT}: no environment the stack deploys is larger.
 */
export function worstCaseEnvironment(
  topology: Topology,
  options: EnvironmentOptions = {},
): Record<string, string> {
  const url = (name: string): string => `${LONGEST_QUEUE_URL_PREFIX}${name}`;
  const queueUrls = Object.fromEntries(
    Object.values(QueueRole).map((role) => [role, url(topology.queues[role].name)]),
  ) as Record<QueueRole, string>;
  const busName = options.eventBusName;
  return {
    ...handlerEnvironment({
      tableName:
        options.tableName === undefined
          ? topology.tableName
          : Token.isUnresolved(options.tableName)
            ? 't'.repeat(LONGEST_TABLE_NAME)
            : options.tableName,
      queueUrls,
      replyQueueUrls: topology.replyPartitions.map((spec) => url(spec.name)),
      bucketName: 'b'.repeat(LONGEST_BUCKET_NAME),
      partitioning: topology.partitioning,
      ...(busName !== undefined
        ? { eventBusName: Token.isUnresolved(busName) ? 'e'.repeat(LONGEST_BUS_NAME) : busName }
        : {}),
      ...(options.claimCheckThresholdBytes !== undefined
        ? { claimCheckThresholdBytes: options.claimCheckThresholdBytes }
        : {}),
      completionLeaseSeconds: topology.completionLeaseSeconds,
      ...(options.recipientAccounts !== undefined ? { recipientAccounts: options.recipientAccounts } : {}),
      serviceName: options.serviceName ?? topology.prefix,
      ...(options.tracing ? { tracing: true } : {}),
      ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
    }),
    // Set on each function once the distributor's role exists (infra/fanin-handlers.ts).
    [ConfigEnv.TRUSTED_MOVERS]: trustedMoversValue(['r'.repeat(LONGEST_ROLE_ID)]),
    ...FUNCTION_ENVIRONMENT,
  };
}

/**
 * An upper bound of the size of a handler's environment, in bytes: the JSON text of
 * {@link worstCaseEnvironment}. Lambda does not document how it counts; the JSON text (names,
 * values, quotes and separators) is at least as large as any count of names and values.
 */
export function environmentSizeBound(topology: Topology, options: EnvironmentOptions = {}): number {
  return Buffer.byteLength(JSON.stringify(worstCaseEnvironment(topology, options)));
}
