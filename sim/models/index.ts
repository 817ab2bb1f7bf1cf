/**
 * In-memory models of the AWS services fanin uses, for the deterministic simulation: the real use
 * cases, handlers and adapters run against them under one seeded scheduler. Every model is
 * synchronous and a pure function of its calls, its `clock` and its `random` (no timers, no
 * `Date.now`, no `Math.random`). Errors are the SDK's own exception classes (so the adapters'
 * `instanceof ConditionalCheckFailedException` holds), with `name`, `message` and `$metadata`.
 * test/integration/guarantees/sim-conformance.test.ts runs the same calls against each model and its
 * emulator and compares the answers.
 *
 * DynamoDB ({@link DynamoDbModel}), faithful to: the document client's translation (fanin's
 * `DOCUMENT_TRANSLATE_CONFIG`, the same fields per command as lib-dynamodb); condition, filter,
 * update (SET with `+`, `-`, `if_not_exists`, `list_append`; REMOVE; ADD on numbers and sets;
 * DELETE), key condition (=, <, <=, >, >=, BETWEEN, begins_with) and projection expressions;
 * placeholders (undefined ones and unused ones refused); overlapping update paths and key
 * updates refused; ReturnValues and ReturnValuesOnConditionCheckFailure (its `Item` in wire form,
 * as the real document client leaves it); Limit, ExclusiveStartKey, LastEvaluatedKey, the 1 MB
 * page, ScanIndexForward, Select COUNT; sparse GSIs with their projection; eventually consistent
 * reads (GetItem and Query without ConsistentRead, every GSI query) returning, by chance, a
 * version up to `staleMs` old; transactions all-or-nothing with per-item cancellation reasons;
 * the limits (400 KB items sized as DynamoDB sizes them, 2048-byte partition and 1024-byte sort
 * keys, no empty key strings, 38-digit numbers, 100 items and 4 MB per transaction, 25 per
 * BatchWrite, 100 per BatchGet); TTL deleting expired items at any moment after expiry
 * (`expireSome`, `expireAll`), expired items read until then; reserved words refused as bare
 * names; errors in DynamoDB's own words (DynamoDB Local words some differently: see the
 * conformance test). Not modelled: capacity and throttling (the simulation injects those around
 * a call), local secondary indexes, PartiQL, streams, ClientRequestToken idempotence, the legacy
 * `Expected`/`AttributesToGet` parameters, UnprocessedItems/UnprocessedKeys (always empty),
 * parallel scan segments.
 *
 * SQS ({@link SqsModel}), faithful to: queue URLs
 * `https://sqs.<region>.amazonaws.com/<account>/<name>` and ARNs; at-least-once delivery (a receive on a standard queue may also return a message
 * another receiver holds, with a new receipt handle and its receive count raised); no order on
 * standard queues; receives that return fewer messages than they could; visibility timeouts
 * (per queue, per receive, ChangeMessageVisibility with the latest handle); a delete with an older
 * receipt handle succeeds but may leave the message (as SQS documents); DelaySeconds per queue and
 * per message (0-900, not per message on FIFO); retention; redrive to the DLQ after
 * maxReceiveCount receives; system attributes (SentTimestamp, ApproximateReceiveCount,
 * ApproximateFirstReceiveTimestamp, MessageGroupId, SequenceNumber, AWSTraceHeader,
 * DeadLetterQueueSourceArn); message attribute rules (10 at most, names, types, non-empty values);
 * the message size (body plus attribute names, types and values; SQS's 1 MiB by default, as on
 * AWS and fauxqs, or the queue's MaximumMessageSize); batches (10 entries, distinct ids, 1 MiB in
 * all, per-entry `Failed`, an entry over its queue's limit among them); FIFO queues (group
 * required, deduplication id or content-based, a five-minute window per queue or per group, one
 * group in flight at a time, order within a group). fauxqs does not check message attributes;
 * the model follows SQS's documented rules there. Not modelled:
 * long polling waits (a receive answers at once; the scheduler advances time), a message
 * returned again after its delete, visibility beyond 12 hours in all, policies, KMS, tags.
 *
 * S3 ({@link S3Model}): CreateBucket, PutObject, GetObject (a body read once with
 * `transformToString`), HeadObject, DeleteObject, NoSuchKey/NoSuchBucket/NotFound, key length;
 * lifecycle expiration by prefix (`expireAfterDays`, rounded to midnight UTC as S3 does) at any
 * moment after it is due. Not modelled: listing, versions, multipart, ranges, conditional requests.
 *
 * EventBridge ({@link EventBridgeModel}): PutEvents (10 entries, 256 KB in all, per-entry
 * failures), CreateEventBus; every accepted event kept per bus. Not modelled: rules and targets.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoDbModel, isDynamoDbWrite } from './dynamodb.ts';
import { EventBridgeModel, isEventBridgeWrite } from './eventbridge.ts';
import { isS3Write, S3Model } from './s3.ts';
import { isSqsWrite, SqsModel } from './sqs.ts';

export type { DynamoDbModelOptions } from './dynamodb.ts';
export type { DeliveredEvent, EventBridgeModelOptions } from './eventbridge.ts';
export type { S3ModelOptions } from './s3.ts';
export type { MessageView, SqsModelOptions } from './sqs.ts';
export {
  DynamoDbModel,
  EventBridgeModel,
  isDynamoDbWrite,
  isEventBridgeWrite,
  isS3Write,
  isSqsWrite,
  S3Model,
  SqsModel,
};

/** The services the models stand for, as `clientsOver` names them to `intercept`. */
export type ModelService = 'sqs' | 'dynamodb' | 's3' | 'eventbridge';

/** The models of one simulation run. */
export interface Models {
  readonly sqs: SqsModel;
  readonly dynamodb: DynamoDbModel;
  readonly s3?: S3Model;
  readonly eventBridge?: EventBridgeModel;
}

/**
 * The models without any fault of their own: no duplicate or short receive, no stale read or
 * ignored stale delete, nothing expired before a test says so. What the test kit and the unit
 * tests of the adapters and the local runtime run on, where faults are injected by the caller
 * (an `intercept`), never by chance.
 *
 * @param expireAfterDays the bucket's lifecycle rule for every key (none when undefined)
 */
export function faultFreeModels(
  clock: () => number,
  random: () => number,
  expireAfterDays?: number,
): Required<Models> {
  return {
    dynamodb: new DynamoDbModel({ clock, random, staleProbability: 0, expiryProbability: 0 }),
    sqs: new SqsModel({
      clock,
      random,
      duplicateProbability: 0,
      shortReceiveProbability: 0,
      staleDeleteIgnoredProbability: 0,
    }),
    s3: new S3Model({
      clock,
      random,
      ...(expireAfterDays !== undefined ? { expireAfterDays: { '': expireAfterDays } } : {}),
      expiryProbability: 0,
    }),
    eventBridge: new EventBridgeModel({ clock, random }),
  };
}

/**
 * Where the scheduler takes each call: it may run `call` (the model's answer, or its error)
 * at once or later, throw instead of running it (a call that failed before it took effect), or
 * run it and then throw (a timeout after the write took effect). The default runs it.
 */
export type Intercept = (
  service: ModelService,
  commandName: string,
  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  input: any,
  // biome-ignore lint/suspicious/noExplicitAny: answers of every shape pass through here
  call: () => any,
) => unknown;

/** True when a command of `service` changes state (a timeout after it may have taken effect). */
export function isWrite(service: ModelService, commandName: string): boolean {
  switch (service) {
    case 'dynamodb':
      return isDynamoDbWrite(commandName);
    case 'sqs':
      return isSqsWrite(commandName);
    case 's3':
      return isS3Write(commandName);
    default:
      return isEventBridgeWrite(commandName);
  }
}

/** A client of `Class` whose `send` goes to `model` through `intercept`. */
function clientOf<Client extends object>(
  Class: { readonly prototype: Client },
  service: ModelService,
  model: { handle(commandName: string, input: unknown): unknown },
  intercept: Intercept,
  region: string,
): Client {
  // An instance of the SDK's class (the paginators check `instanceof`), with no configuration
  // and no middleware: nothing of it but `send` is used.
  const client = Object.create(Class.prototype) as Client;
  Object.assign(client, {
    send: async (command: { constructor: { name: string }; input: unknown }) => {
      const name = command.constructor.name;
      return await intercept(service, name, command.input, () => model.handle(name, command.input));
    },
    destroy: () => undefined,
    config: { region: async () => region },
  });
  return client;
}

/** Clients shaped like fanin's `FaninClients` (shared/app.ts), over the models. */
export interface ModelClients {
  readonly sqs: SQSClient;
  /** The document client the adapters use. */
  readonly dynamo: DynamoDBDocumentClient;
  /** The low-level DynamoDB client (provisioning: CreateTable, UpdateTimeToLive, DescribeTable). */
  readonly dynamoDb: DynamoDBClient;
  readonly s3?: S3Client;
  readonly eventBridge?: EventBridgeClient;
  destroy(): void;
}

/**
 * SDK clients whose `send(command)` calls `intercept(service, command.constructor.name,
 * command.input, () => model.handle(...))`: what the adapters take as `FaninClients`.
 */
export function clientsOver(
  models: Models,
  intercept: Intercept = (_service, _name, _input, call) => call(),
  region = 'us-east-1',
): ModelClients {
  return {
    sqs: clientOf(SQSClient, 'sqs', models.sqs, intercept, region),
    dynamo: clientOf(DynamoDBDocumentClient, 'dynamodb', models.dynamodb, intercept, region),
    dynamoDb: clientOf(DynamoDBClient, 'dynamodb', models.dynamodb, intercept, region),
    ...(models.s3 ? { s3: clientOf(S3Client, 's3', models.s3, intercept, region) } : {}),
    ...(models.eventBridge
      ? { eventBridge: clientOf(EventBridgeClient, 'eventbridge', models.eventBridge, intercept, region) }
      : {}),
    destroy: () => undefined,
  };
}
