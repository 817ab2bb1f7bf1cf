import { Token } from 'aws-cdk-lib';
import { ConfigEnv, configToEnv } from '../shared/config.ts';
import { type Partitioning, QueueRole, type Topology } from '../shared/topology/topology.ts';
import { FUNCTION_ENVIRONMENT } from './fanin-function.ts';

/** Lambda refuses a function whose environment variables add up to more than 4 KB. */
export const LAMBDA_ENV_LIMIT_BYTES = 4096;

/**
 * The longest prefix a queue URL can have: a 14-character region name and the China partition's
 * domain (`amazonaws.com.cn`, longer than the commercial, GovCloud and ISO ones). Queue URLs are
 * deploy-time values, so the size check assumes this prefix for every queue.
 */
export const LONGEST_QUEUE_URL_PREFIX = 'https://sqs.cn-northwest-1.amazonaws.com.cn/123456789012/';

/** S3's longest bucket name: the bucket is named by CloudFormation, so its length is unknown at synth. */
const LONGEST_BUCKET_NAME = 63;
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
}

/** What the size bound needs besides the topology: the values the stack knows at synth. */
export interface EnvironmentOptions {
  /** The output bus name when there is a bus (a token counts as EventBridge's longest name). */
  readonly eventBusName?: string;
  readonly claimCheckThresholdBytes?: number;
  readonly recipientAccounts?: readonly string[];
}

/**
 * The handlers' environment: the runtime configuration contract of `shared/config.ts`, encoded by
 * its own `configToEnv`, so the stack and `loadConfig` cannot disagree on a name or an encoding.
 * The definitions are left out: they are compiled into each bundle (see FaninFunction).
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
  return environment;
}

/**
 * The handlers' environment with the longest value each deploy-time name can take (queue URLs in
 * the longest region, a 63-character bucket name, a 256-character bus name when the bus's name is
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
      tableName: topology.tableName,
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
    }),
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
