/**
 * The one place where AWS SDK v3 clients are created.
 *
 * Clients take their region, credentials and endpoints from the SDK's standard settings:
 * `AWS_REGION`, the credential chain, and `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>`,
 * which the SDK reads itself. That is how the same code talks to AWS or LocalStack without
 * knowing which. The one exception is a {@link Connection} to services the local runtime found
 * itself (the emulators it started, or the endpoints a running runtime recorded).
 *
 * Each entry point (a Lambda function, `npm start`, one CLI run, the soak, a demo process) builds
 * its clients once with {@link createClients} and passes them down; nothing here is process-wide.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, type EventBridgeClientConfig } from '@aws-sdk/client-eventbridge';
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, type TranslateConfig } from '@aws-sdk/lib-dynamodb';

/**
 * Extra SDK configuration layered over the standard settings, e.g. `{ maxAttempts: 1 }` in a
 * test. `endpoint` is left out on purpose: endpoints come from `AWS_ENDPOINT_URL[_<SERVICE>]`.
 */
export type ClientOptions<Config> = Omit<Config, 'endpoint'>;

/** The services fanin calls, by the suffix the SDK reads in `AWS_ENDPOINT_URL_<SERVICE>`. */
export const SERVICES = ['SQS', 'DYNAMODB', 'S3', 'EVENTBRIDGE'] as const;
export type Service = (typeof SERVICES)[number];

/**
 * Where clients connect beyond the standard settings. Only the local runtime fills it in, with
 * what it found itself: the emulators it started on loopback (`local/emulators.ts`), or, for a CLI
 * or a demo process, the endpoints the running runtime recorded in its state file. Never from a
 * message, never hard-coded: a service without an endpoint here keeps the standard settings, so
 * LocalStack (`AWS_ENDPOINT_URL`) works unchanged.
 */
export interface Connection {
  /** Endpoints by service; any service not named uses the standard settings. */
  readonly endpoints?: Readonly<Partial<Record<Service, string>>>;
  /** The region, when the environment names none (emulators accept any). */
  readonly region?: string;
  /** Credentials, when the environment has none (emulators accept any, e.g. `test`/`test`). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/** Options of {@link createClients}. */
export interface ClientsOptions extends Connection {
  /**
   * Applied to each client when it is created, e.g. Powertools Tracer's `captureAWSv3Client`,
   * which records each AWS call as an X-Ray subsegment. The document client shares the DynamoDB
   * client's middleware, so it is instrumented with it.
   */
  readonly instrument?: <Client>(client: Client) => Client;
}

/**
 * The AWS clients of one entry point, from {@link createClients}. Each client is created on first
 * use (a function that never touches S3 builds no S3 client) and then kept. It fits
 * `FaninClients` (`shared/app.ts`) as it is.
 */
export interface AwsClients {
  readonly sqs: SQSClient;
  /** The document client (over {@link dynamoDb}), with {@link DOCUMENT_TRANSLATE_CONFIG}: what the adapters use. */
  readonly dynamo: DynamoDBDocumentClient;
  /** The plain DynamoDB client under {@link dynamo}: table operations and waiters (provisioning). */
  readonly dynamoDb: DynamoDBClient;
  readonly s3: S3Client;
  readonly eventBridge: EventBridgeClient;
  /**
   * Closes the sockets of every client created so far, so a short-lived process ends at once. A
   * later use creates a new client.
   */
  destroy(): void;
}

/**
 * How the document client converts between JavaScript and DynamoDB: `undefined` attributes are
 * dropped instead of failing the call, and class instances are rejected rather than silently
 * flattened into maps.
 */
export const DOCUMENT_TRANSLATE_CONFIG: TranslateConfig = {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
};

/**
 * True when the SDK will send this service's requests to a configured endpoint (LocalStack, an
 * emulator) instead of AWS, i.e. `AWS_ENDPOINT_URL` or `AWS_ENDPOINT_URL_<SERVICE>` is set and
 * not disabled by `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`.
 *
 * @param service the suffix the SDK uses, e.g. `SQS`, `S3`, `DYNAMODB`, `EVENTBRIDGE`
 */
export function endpointOverridden(service: string): boolean {
  const env = process.env;
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return false;
  return Boolean(env.AWS_ENDPOINT_URL || env[`AWS_ENDPOINT_URL_${service}`]);
}

/**
 * The endpoint of each service that `AWS_ENDPOINT_URL_<SERVICE>`, else `AWS_ENDPOINT_URL`, names
 * in `variables`, as the SDK reads them from the environment: how the local runtime turns the
 * variables of its emulators or its state file into a {@link Connection}.
 */
export function configuredEndpoints(
  variables: Readonly<Record<string, string | undefined>>,
): Partial<Record<Service, string>> {
  const endpoints: Partial<Record<Service, string>> = {};
  for (const service of SERVICES) {
    const endpoint = variables[`AWS_ENDPOINT_URL_${service}`] || variables.AWS_ENDPOINT_URL;
    if (endpoint) endpoints[service] = endpoint;
  }
  return endpoints;
}

/**
 * The clients of one entry point: build them once where the entry point starts and pass them
 * down. Without options every client uses the standard settings (a Lambda function, a CLI run
 * against a stack, the tests).
 *
 * @example
 * const clients = createClients();
 * await clients.sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: '{}' }));
 * clients.destroy();
 */
export function createClients(options: ClientsOptions = {}): AwsClients {
  const instrument = options.instrument ?? (<Client>(client: Client) => client);
  const config = (service: Service) => ({
    ...(options.endpoints?.[service] ? { endpoint: options.endpoints[service] } : {}),
    ...(options.region ? { region: options.region } : {}),
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
  });
  const open = () => {
    const dynamoDb = lazy(() => instrument(new DynamoDBClient(config('DYNAMODB'))));
    return {
      sqs: lazy(() => instrument(sqsClientOf(config('SQS')))),
      dynamoDb,
      // Not instrumented again: it sends through the DynamoDB client's middleware.
      dynamo: lazy(() => createDocumentClient(dynamoDb.get())),
      s3: lazy(() =>
        instrument(s3ClientOf(config('S3'), Boolean(options.endpoints?.S3) || endpointOverridden('S3'))),
      ),
      eventBridge: lazy(() => instrument(new EventBridgeClient(config('EVENTBRIDGE')))),
    };
  };
  let clients = open();
  return {
    get sqs() {
      return clients.sqs.get();
    },
    get dynamo() {
      return clients.dynamo.get();
    },
    get dynamoDb() {
      return clients.dynamoDb.get();
    },
    get s3() {
      return clients.s3.get();
    },
    get eventBridge() {
      return clients.eventBridge.get();
    },
    destroy() {
      const { sqs, dynamoDb, s3, eventBridge } = clients;
      clients = open();
      // The document client is left out: destroying it would only destroy the DynamoDB client again.
      for (const client of [sqs, dynamoDb, s3, eventBridge]) client.destroy();
    },
  };
}

/** A client created on first use; `destroy` closes it only if it was created. */
function lazy<Client extends { destroy(): void }>(create: () => Client): { get(): Client; destroy(): void } {
  let client: Client | undefined;
  return {
    get: () => {
      client ??= create();
      return client;
    },
    destroy: () => client?.destroy(),
  };
}

/**
 * A new SQS client on its own, e.g. one a test instruments or breaks; entry points use
 * {@link createClients}.
 *
 * Its endpoint comes only from the standard configuration (`AWS_ENDPOINT_URL[_SQS]`, else the
 * region's): `useQueueUrlAsEndpoint` is always off, whatever `options` say. By default SDK v3
 * sends each request to the host of its `QueueUrl`, so a queue URL taken from a message would
 * choose where the payload, the attributes and the signed credentials (access key id, session
 * token) go. With it off, a `QueueUrl` only names the queue. It also keeps emulators working,
 * whose queue URLs (`http://sqs.us-east-1.localhost:4566/…`) name hosts that may not resolve.
 */
export function createSqsClient(options: ClientOptions<SQSClientConfig> = {}): SQSClient {
  return sqsClientOf(options);
}

function sqsClientOf(config: SQSClientConfig): SQSClient {
  return new SQSClient({ ...config, useQueueUrlAsEndpoint: false });
}

/** A new DynamoDB client on its own; entry points use {@link createClients}. */
export function createDynamoClient(options: ClientOptions<DynamoDBClientConfig> = {}): DynamoDBClient {
  return new DynamoDBClient({ ...options });
}

/**
 * A new document client over `client`, with {@link DOCUMENT_TRANSLATE_CONFIG}. Note that
 * destroying a document client destroys its underlying client.
 */
export function createDocumentClient(client: DynamoDBClient): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, DOCUMENT_TRANSLATE_CONFIG);
}

/**
 * A new S3 client on its own; entry points use {@link createClients}.
 *
 * With an endpoint override it uses path-style URLs: virtual-hosted style puts the bucket in the
 * host name (`bucket.localhost`), which an emulator's host does not resolve.
 */
export function createS3Client(options: ClientOptions<S3ClientConfig> = {}): S3Client {
  return s3ClientOf(options, endpointOverridden('S3'));
}

function s3ClientOf(config: S3ClientConfig, overridden: boolean): S3Client {
  return new S3Client({ ...(overridden ? { forcePathStyle: true } : {}), ...config });
}

/** A new EventBridge client on its own; entry points use {@link createClients}. */
export function createEventBridgeClient(
  options: ClientOptions<EventBridgeClientConfig> = {},
): EventBridgeClient {
  return new EventBridgeClient({ ...options });
}
