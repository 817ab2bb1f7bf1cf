import { appendFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaninClients } from '../../shared/app.ts';

/**
 * Records every AWS call a function's clients make, as IAM authorizes it: the action, the
 * resource as the emulator names it (a queue URL, a table and index, a bucket and key, a bus) and
 * the condition keys the request carries (`dynamodb:LeadingKeys`). One SDK call can be several
 * authorizations: each item of a TransactWriteItems is authorized as its own PutItem, UpdateItem,
 * DeleteItem or ConditionCheckItem under its own key. test/support/policy-proof.ts evaluates the
 * records against the synthesized policies.
 */

/** The functions of a fanin deployment (the keys of infra/fanin-props.ts `FaninFunctions`). */
export type FunctionName = 'fanOut' | 'reply' | 'timer' | 'sweeper' | 'control' | 'distributor';

/** What a call acts on, as the emulators name it. */
export type CallResource =
  | { readonly kind: 'queue'; readonly url?: string; readonly name: string }
  | { readonly kind: 'table'; readonly name: string; readonly index?: string }
  | { readonly kind: 'object'; readonly bucket: string; readonly key: string }
  | { readonly kind: 'bucket'; readonly bucket: string }
  | { readonly kind: 'bus'; readonly name: string };

/** One authorization of one recorded call. */
export interface RecordedCall {
  readonly fn: FunctionName;
  /** The SDK command, e.g. `SendMessageBatchCommand`. */
  readonly command: string;
  /** The IAM action, e.g. `sqs:SendMessage`. */
  readonly action: string;
  readonly resource: CallResource;
  /** `dynamodb:LeadingKeys` of an item or table query; absent elsewhere. */
  readonly leadingKeys?: readonly string[];
}

type Input = Record<string, unknown>;
type Middleware = (
  next: (args: { input: Input }) => Promise<unknown>,
  context: { commandName?: string },
) => (args: { input: Input }) => Promise<unknown>;
interface Instrumentable {
  middlewareStack: { add(middleware: Middleware, options: { step: 'initialize'; name: string }): void };
}

/** A DynamoDB attribute as the document client (native) or the low-level client (`{ S }`) gives it. */
function text(value: unknown): string {
  if (value && typeof value === 'object' && 'S' in value) return String((value as { S: unknown }).S);
  return String(value);
}

function queueOf(input: Input): CallResource {
  const url = String(input.QueueUrl ?? '');
  if (!url && typeof input.QueueName === 'string') return { kind: 'queue', name: input.QueueName };
  return { kind: 'queue', url, name: url.slice(url.lastIndexOf('/') + 1) };
}

/** The partition key a key condition fixes (`pk = :v`, or through an `#name`). */
function queriedKey(input: Input): string | undefined {
  const condition = String(input.KeyConditionExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
  for (const match of condition.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const [, attribute = '', placeholder = ''] = match;
    if ((names[attribute] ?? attribute) === 'pk') return text(values[placeholder]);
  }
  return undefined;
}

function keyOf(item: unknown): string[] {
  const key = (item ?? {}) as { pk?: unknown };
  return key.pk === undefined ? [] : [text(key.pk)];
}

const SQS_ACTIONS: Record<string, string> = {
  SendMessageCommand: 'sqs:SendMessage',
  SendMessageBatchCommand: 'sqs:SendMessage',
  ReceiveMessageCommand: 'sqs:ReceiveMessage',
  DeleteMessageCommand: 'sqs:DeleteMessage',
  DeleteMessageBatchCommand: 'sqs:DeleteMessage',
  ChangeMessageVisibilityCommand: 'sqs:ChangeMessageVisibility',
  ChangeMessageVisibilityBatchCommand: 'sqs:ChangeMessageVisibility',
  GetQueueAttributesCommand: 'sqs:GetQueueAttributes',
  GetQueueUrlCommand: 'sqs:GetQueueUrl',
};

/** The authorizations of one SDK call of a function. */
export function authorizationsOf(fn: FunctionName, command: string, input: Input): RecordedCall[] {
  const call = (action: string, resource: CallResource, leadingKeys?: string[]): RecordedCall => ({
    fn,
    command,
    action,
    resource,
    ...(leadingKeys ? { leadingKeys } : {}),
  });
  const sqs = SQS_ACTIONS[command];
  if (sqs) return [call(sqs, queueOf(input))];
  const table = (name: unknown, index?: unknown): CallResource => ({
    kind: 'table',
    name: String(name),
    ...(typeof index === 'string' ? { index } : {}),
  });
  switch (command) {
    case 'GetCommand':
    case 'GetItemCommand':
      return [call('dynamodb:GetItem', table(input.TableName), keyOf(input.Key))];
    case 'PutCommand':
    case 'PutItemCommand':
      return [call('dynamodb:PutItem', table(input.TableName), keyOf(input.Item))];
    case 'UpdateCommand':
    case 'UpdateItemCommand':
      return [call('dynamodb:UpdateItem', table(input.TableName), keyOf(input.Key))];
    case 'DeleteCommand':
    case 'DeleteItemCommand':
      return [call('dynamodb:DeleteItem', table(input.TableName), keyOf(input.Key))];
    case 'QueryCommand': {
      if (typeof input.IndexName === 'string')
        return [call('dynamodb:Query', table(input.TableName, input.IndexName))];
      const key = queriedKey(input);
      return [call('dynamodb:Query', table(input.TableName), key === undefined ? [] : [key])];
    }
    case 'ScanCommand':
      return [call('dynamodb:Scan', table(input.TableName, input.IndexName))];
    case 'TransactWriteCommand':
    case 'TransactWriteItemsCommand':
      return ((input.TransactItems ?? []) as Record<string, Input>[]).flatMap((item) => {
        if (item.Put) return [call('dynamodb:PutItem', table(item.Put.TableName), keyOf(item.Put.Item))];
        if (item.Update)
          return [call('dynamodb:UpdateItem', table(item.Update.TableName), keyOf(item.Update.Key))];
        if (item.Delete)
          return [call('dynamodb:DeleteItem', table(item.Delete.TableName), keyOf(item.Delete.Key))];
        if (item.ConditionCheck)
          return [
            call(
              'dynamodb:ConditionCheckItem',
              table(item.ConditionCheck.TableName),
              keyOf(item.ConditionCheck.Key),
            ),
          ];
        return [];
      });
    case 'TransactGetCommand':
    case 'TransactGetItemsCommand':
      return ((input.TransactItems ?? []) as { Get: Input }[]).map((item) =>
        call('dynamodb:GetItem', table(item.Get.TableName), keyOf(item.Get.Key)),
      );
    case 'BatchGetCommand':
    case 'BatchGetItemCommand':
      return Object.keys((input.RequestItems ?? {}) as Input).map((name) =>
        call('dynamodb:BatchGetItem', table(name)),
      );
    case 'BatchWriteCommand':
    case 'BatchWriteItemCommand':
      return Object.keys((input.RequestItems ?? {}) as Input).map((name) =>
        call('dynamodb:BatchWriteItem', table(name)),
      );
    case 'GetObjectCommand':
    case 'HeadObjectCommand':
      return [call('s3:GetObject', { kind: 'object', bucket: String(input.Bucket), key: String(input.Key) })];
    case 'PutObjectCommand':
      return [call('s3:PutObject', { kind: 'object', bucket: String(input.Bucket), key: String(input.Key) })];
    case 'DeleteObjectCommand':
      return [
        call('s3:DeleteObject', { kind: 'object', bucket: String(input.Bucket), key: String(input.Key) }),
      ];
    case 'ListObjectsV2Command':
      return [call('s3:ListBucket', { kind: 'bucket', bucket: String(input.Bucket) })];
    case 'PutEventsCommand':
      return [
        ...new Set(
          ((input.Entries ?? []) as { EventBusName?: string }[]).map((e) => e.EventBusName ?? 'default'),
        ),
      ].map((name) => call('events:PutEvents', { kind: 'bus', name }));
    default:
      // A command this map does not know is recorded as it is, so the evaluation fails on it
      // rather than missing it.
      return [call(`unknown:${command}`, { kind: 'table', name: '' })];
  }
}

/** The directory a worker's records are written to (one JSON-lines file per worker). */
export const CALLS_DIR = join(tmpdir(), 'fanin-calls');

/**
 * The calls of the functions of one test run, each function on clients of its own (as each
 * Lambda function has its own clients and its own role), recorded by an SDK middleware.
 */
export class CallRecorder {
  public readonly calls: RecordedCall[] = [];
  private readonly file: string;

  public constructor(file = join(CALLS_DIR, `worker-${process.pid}.jsonl`)) {
    this.file = file;
    mkdirSync(CALLS_DIR, { recursive: true });
  }

  /** Adds the recording middleware to a function's clients (each client once). */
  public instrument(fn: FunctionName, clients: FaninClients): FaninClients {
    const seen = new Set<unknown>();
    for (const client of [clients.sqs, clients.dynamo, clients.s3, clients.eventBridge]) {
      if (!client || seen.has(client)) continue;
      seen.add(client);
      (client as unknown as Instrumentable).middlewareStack.add(
        (next, context) => async (args) => {
          const records = authorizationsOf(fn, context.commandName ?? 'unknown', args.input);
          this.calls.push(...records);
          appendFileSync(this.file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
          return next(args);
        },
        { step: 'initialize', name: `faninCallRecorder-${fn}` },
      );
    }
    return clients;
  }
}
