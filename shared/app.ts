import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoStateStore } from './adapters/dynamo-state-store.ts';
import { SqsOutputPublisher } from './adapters/sqs-outputs.ts';
import { SqsRequestSender } from './adapters/sqs-sender.ts';
import { SqsTimerScheduler } from './adapters/sqs-timers.ts';
import { documentClient, eventBridgeClient, sqsClient } from './aws/clients.ts';
import { loadConfig, type RuntimeConfig } from './config.ts';
import { QueueRole } from './topology/topology.ts';
import { CONTEXT_DEFAULTS, type FaninContext } from './use-cases/context.ts';

/** The AWS clients the adapters use; by default the process-wide ones from `aws/clients.ts`. */
export interface FaninClients {
  readonly sqs: SQSClient;
  readonly dynamo: DynamoDBDocumentClient;
  readonly eventBridge?: EventBridgeClient;
}

/**
 * Wires the adapters to a configuration: the one place where the use cases meet the AWS SDK.
 * `overrides` replace any part (a clock in tests, a failpoint-wrapped store).
 */
export function createContext(
  config: RuntimeConfig,
  clients: FaninClients = defaultClients(config),
  overrides: Partial<FaninContext> = {},
): FaninContext {
  const { completed, error, late, status, unknown } = config.queueUrls;
  return {
    store: new DynamoStateStore({ client: clients.dynamo, tableName: config.tableName }),
    outputs: new SqsOutputPublisher({
      sqs: clients.sqs,
      queueUrls: {
        completed,
        error,
        late,
        status,
        unknown,
        'timed-out': config.queueUrls[QueueRole.TIMED_OUT],
      },
      ...(clients.eventBridge ? { eventBridge: clients.eventBridge } : {}),
      ...(config.eventBusName ? { eventBusName: config.eventBusName } : {}),
    }),
    timers: new SqsTimerScheduler({ sqs: clients.sqs, queueUrl: config.queueUrls[QueueRole.TIMER] }),
    sender: new SqsRequestSender({ sqs: clients.sqs }),
    definitions: config.definitions,
    replyQueueUrls: config.replyQueueUrls,
    clock: Date.now,
    ...CONTEXT_DEFAULTS,
    ...overrides,
  };
}

function defaultClients(config: RuntimeConfig): FaninClients {
  return {
    sqs: sqsClient(),
    dynamo: documentClient(),
    ...(config.eventBusName ? { eventBridge: eventBridgeClient() } : {}),
  };
}

let fromEnvironment: FaninContext | undefined;

/** The context of a Lambda function: built once per execution environment from its environment. */
export function contextFromEnvironment(): FaninContext {
  fromEnvironment ??= createContext(loadConfig());
  return fromEnvironment;
}
