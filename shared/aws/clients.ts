/**
 * The one place where AWS SDK v3 clients are created.
 *
 * Clients take their region, credentials and endpoints only from the SDK's standard settings:
 * `AWS_REGION`, the credential chain, and `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_<SERVICE>`,
 * which the SDK reads itself. That is how the same code talks to AWS, LocalStack or the local
 * emulators without knowing which. The only thing decided here is what an emulator endpoint
 * needs on top of that.
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
 * A new, unshared SQS client. Prefer {@link sqsClient} unless the client must not be shared.
 *
 * Its endpoint comes only from the standard configuration (`AWS_ENDPOINT_URL[_SQS]`, else the
 * region's): `useQueueUrlAsEndpoint` is always off, whatever `options` say. By default SDK v3
 * sends each request to the host of its `QueueUrl`, so a queue URL taken from a message would
 * choose where the payload, the attributes and the signed credentials (access key id, session
 * token) go. With it off, a `QueueUrl` only names the queue. It also keeps emulators working,
 * whose queue URLs (`http://sqs.us-east-1.localhost:4566/…`) name hosts that may not resolve.
 */
export function createSqsClient(options: ClientOptions<SQSClientConfig> = {}): SQSClient {
  return new SQSClient({ ...options, useQueueUrlAsEndpoint: false });
}

/**
 * A new, unshared DynamoDB client. Prefer {@link dynamoClient} unless the client must not be shared.
 */
export function createDynamoClient(options: ClientOptions<DynamoDBClientConfig> = {}): DynamoDBClient {
  return new DynamoDBClient({ ...options });
}

/**
 * A new document client over `client` (by default the shared {@link dynamoClient}), with
 * {@link DOCUMENT_TRANSLATE_CONFIG}. Note that destroying a document client destroys its
 * underlying client.
 */
export function createDocumentClient(client: DynamoDBClient = dynamoClient()): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(client, DOCUMENT_TRANSLATE_CONFIG);
}

/**
 * A new, unshared S3 client. Prefer {@link s3Client} unless the client must not be shared.
 *
 * With an endpoint override it uses path-style URLs: virtual-hosted style puts the bucket in the
 * host name (`bucket.localhost`), which an emulator's host does not resolve.
 */
export function createS3Client(options: ClientOptions<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    ...(endpointOverridden('S3') ? { forcePathStyle: true } : {}),
    ...options,
  });
}

/**
 * A new, unshared EventBridge client. Prefer {@link eventBridgeClient} unless the client must not be shared.
 */
export function createEventBridgeClient(
  options: ClientOptions<EventBridgeClientConfig> = {},
): EventBridgeClient {
  return new EventBridgeClient({ ...options });
}

interface Slot<Client> {
  client: Client;
  options: object | undefined;
}

const slots = new Map<string, Slot<{ destroy(): void }>>();

/** Applied to each process-wide client when it is created (see {@link instrumentClients}). */
let instrument: <Client>(client: Client) => Client = (client) => client;

/**
 * Instruments the process-wide clients created from now on, e.g. Powertools Tracer's
 * `captureAWSv3Client`, which records each AWS call as an X-Ray subsegment. Call it before the
 * first client is created (clients created earlier stay as they are: {@link resetClients} first).
 * The document client shares the DynamoDB client's middleware, so it is instrumented with it.
 */
export function instrumentClients(capture: <Client>(client: Client) => Client): void {
  instrument = capture;
}

/**
 * Returns the process-wide client of `name`, creating it with `options` on first use. Later calls
 * may repeat the same options (compared shallowly, so an inline literal is fine) but not change
 * them: silently returning a client configured differently from what the caller asked for would
 * be worse than failing.
 */
function memoised<Client extends { destroy(): void }, Options extends object>(
  name: string,
  options: Options | undefined,
  create: (options: Options | undefined) => Client,
): Client {
  const slot = slots.get(name) as Slot<Client> | undefined;
  if (slot === undefined) {
    const client = name === 'documentClient' ? create(options) : instrument(create(options));
    slots.set(name, { client, options });
    return client;
  }
  if (options !== undefined && !shallowEqual(options, slot.options ?? {})) {
    throw new Error(
      `${name}() already exists with other options; call ${create.name}(options) for a separate client, or resetClients() first`,
    );
  }
  return slot.client;
}

function shallowEqual(a: object, b: object): boolean {
  const aEntries = Object.entries(a);
  const bRecord = b as Record<string, unknown>;
  return (
    aEntries.length === Object.keys(b).length &&
    aEntries.every(([key, value]) => Object.hasOwn(b, key) && Object.is(value, bRecord[key]))
  );
}

/**
 * The process-wide SQS client (see {@link createSqsClient}).
 *
 * @param options applied when the client is first created; a later call with different options throws
 * @example
 * await sqsClient().send(new SendMessageCommand({ QueueUrl, MessageBody: '{}' }));
 */
export function sqsClient(options?: ClientOptions<SQSClientConfig>): SQSClient {
  return memoised('sqsClient', options, createSqsClient);
}

/**
 * The process-wide DynamoDB client (see {@link createDynamoClient}).
 *
 * @param options applied when the client is first created; a later call with different options throws
 */
export function dynamoClient(options?: ClientOptions<DynamoDBClientConfig>): DynamoDBClient {
  return memoised('dynamoClient', options, createDynamoClient);
}

/**
 * The process-wide DynamoDB document client, over {@link dynamoClient}, with
 * {@link DOCUMENT_TRANSLATE_CONFIG}.
 *
 * @example
 * await documentClient().send(new PutCommand({ TableName, Item: { pk: 'a', note: undefined } }));
 */
export function documentClient(): DynamoDBDocumentClient {
  return memoised('documentClient', undefined, () => createDocumentClient(dynamoClient()));
}

/**
 * The process-wide S3 client (see {@link createS3Client}).
 *
 * @param options applied when the client is first created; a later call with different options throws
 */
export function s3Client(options?: ClientOptions<S3ClientConfig>): S3Client {
  return memoised('s3Client', options, createS3Client);
}

/**
 * The process-wide EventBridge client (see {@link createEventBridgeClient}).
 *
 * @param options applied when the client is first created; a later call with different options throws
 */
export function eventBridgeClient(options?: ClientOptions<EventBridgeClientConfig>): EventBridgeClient {
  return memoised('eventBridgeClient', options, createEventBridgeClient);
}

/**
 * Destroys the process-wide clients (closing their sockets) so the next call creates new ones,
 * e.g. after a test changed the environment they read.
 */
export function resetClients(): void {
  // The document client wraps the shared DynamoDB client; destroying both is harmless.
  for (const { client } of slots.values()) client.destroy();
  slots.clear();
}
