import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * Records every AWS call made in a test worker, as IAM authorizes it: the action, the resource
 * as the emulator names it (a queue URL, a table and index, a bucket and key, a bus), the
 * condition keys the request carries (`dynamodb:LeadingKeys`), and who made it — the fanin
 * function whose role would make it on AWS, or, for a call no function makes, what did (the
 * test itself, provisioning, the producers' and responders' client library, the CLI). One SDK
 * call can be several authorizations: each item of a TransactWriteItems is authorized as its own
 * PutItem, UpdateItem, DeleteItem or ConditionCheckItem under its own key.
 *
 * The recording is done from the test side only ({@link installRecorder}, from the integration
 * project's setup file test/support/record-calls.ts): every SDK client's `send` is wrapped once
 * per process, and the caller is found from what is running, without any change to the product:
 * - a Lambda event source (a {@link https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html
 *   poller}, `local/poller.ts`), a drain schedule (`local/drainer.ts`) or a distributor cycle runs
 *   its handler inside {@link runAs}, so everything it calls, timers and retries included, is that
 *   function's (the receive and delete of the event source too: Lambda makes them with the
 *   function's role);
 * - a use case on the call's (async) stack that is a function's entry point
 *   ({@link ENTRY_POINTS}): a test calling `handleReplies` or `sweep` directly calls as the
 *   reply function or the sweeper ({@link currentCaller} says which wins when there are several).
 * test/support/policy-proof.ts evaluates the records against the synthesized policies.
 */

/** The functions of a fanin deployment (the keys of infra/fanin-props.ts `FaninFunctions`). */
export type FunctionName = 'fanOut' | 'reply' | 'timer' | 'sweeper' | 'control' | 'distributor';
export const FUNCTION_NAMES: readonly FunctionName[] = [
  'fanOut',
  'reply',
  'timer',
  'sweeper',
  'control',
  'distributor',
];

/**
 * Who made a call that no fanin function makes: the test (its setup, assertions, a producer or
 * responder it plays by hand), provisioning (`local/provision.ts`), the producers' and
 * responders' client library (`shared/client/`), the CLI (`local/cli/`); `handler` is a call of a
 * handler a test invoked by hand, outside any use case that tells its function (the timers a batch
 * arms after its records, `functions/handlers.ts`): counted, not evaluated.
 */
export type OtherCaller = 'test' | 'provisioning' | 'client' | 'cli' | 'handler';
export type Caller = FunctionName | OtherCaller;

export function isFunction(caller: Caller): caller is FunctionName {
  return (FUNCTION_NAMES as readonly string[]).includes(caller);
}

/** What a call acts on, as the emulators name it. */
export type CallResource =
  | { readonly kind: 'queue'; readonly url?: string; readonly name: string }
  | { readonly kind: 'table'; readonly name: string; readonly index?: string }
  | { readonly kind: 'object'; readonly bucket: string; readonly key: string }
  | { readonly kind: 'bucket'; readonly bucket: string }
  | { readonly kind: 'bus'; readonly name: string }
  | { readonly kind: 'other' };

/** One authorization of one recorded call. */
export interface RecordedCall {
  readonly fn: Caller;
  /** The SDK command, e.g. `SendMessageBatchCommand`. */
  readonly command: string;
  /** The IAM action, e.g. `sqs:SendMessage`. */
  readonly action: string;
  readonly resource: CallResource;
  /** `dynamodb:LeadingKeys` of an item or table query; absent elsewhere. */
  readonly leadingKeys?: readonly string[];
  /** How many times this very authorization was recorded (1 when absent). */
  readonly count?: number;
}

type Input = Record<string, unknown>;

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
  PurgeQueueCommand: 'sqs:PurgeQueue',
  SetQueueAttributesCommand: 'sqs:SetQueueAttributes',
  DeleteQueueCommand: 'sqs:DeleteQueue',
  ListQueuesCommand: 'sqs:ListQueues',
  CreateQueueCommand: 'sqs:CreateQueue',
};

/** The authorizations of one SDK call. */
export function authorizationsOf(fn: Caller, command: string, input: Input): RecordedCall[] {
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
  const object = (): CallResource => ({
    kind: 'object',
    bucket: String(input.Bucket),
    key: String(input.Key),
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
    case 'DescribeTableCommand':
    case 'CreateTableCommand':
    case 'DeleteTableCommand':
    case 'UpdateTimeToLiveCommand':
    case 'DescribeTimeToLiveCommand':
      return [call(`dynamodb:${command.replace(/Command$/, '')}`, table(input.TableName))];
    case 'GetObjectCommand':
    case 'HeadObjectCommand':
      return [call('s3:GetObject', object())];
    case 'PutObjectCommand':
      return [call('s3:PutObject', object())];
    case 'DeleteObjectCommand':
      return [call('s3:DeleteObject', object())];
    case 'ListObjectsV2Command':
      return [call('s3:ListBucket', { kind: 'bucket', bucket: String(input.Bucket) })];
    case 'PutEventsCommand':
      return [
        ...new Set(
          ((input.Entries ?? []) as { EventBusName?: string }[]).map((e) => e.EventBusName ?? 'default'),
        ),
      ].map((name) => call('events:PutEvents', { kind: 'bus', name }));
    default:
      // A command this map does not know is recorded as it is, so the evaluation fails on it (when
      // a function makes it) rather than missing it.
      return [call(`unknown:${command}`, { kind: 'other' })];
  }
}

// ---- who is calling ----

const running = new AsyncLocalStorage<FunctionName>();

/**
 * Runs `work` as function `fn` (a Lambda invocation of it): every AWS call it makes, at any depth
 * and after any timer, is `fn`'s. Inside another {@link runAs}, the outer function is kept.
 */
export function runAs<T>(fn: FunctionName, work: () => T): T {
  return running.getStore() === undefined ? running.run(fn, work) : work();
}

/**
 * The use cases (and adapters) each function's invocations start in, by file and function name:
 * a call with one of them on its stack is that function's. `expireAggregate` and `expireHeld` are
 * the timer's (the sweeper's own entry, `sweep`, is outer to them when it calls them).
 */
export const ENTRY_POINTS: readonly { file: string; name: string; fn: FunctionName }[] = [
  { file: '/shared/use-cases/fan-out.ts', name: 'handleRequest', fn: 'fanOut' },
  { file: '/shared/use-cases/replies.ts', name: 'handleReplies', fn: 'reply' },
  { file: '/shared/use-cases/reply-drain.ts', name: 'drainReplies', fn: 'reply' },
  { file: '/shared/use-cases/timers.ts', name: 'sweep', fn: 'sweeper' },
  { file: '/shared/use-cases/timers.ts', name: 'handleTimer', fn: 'timer' },
  { file: '/shared/use-cases/timers.ts', name: 'expireAggregate', fn: 'timer' },
  { file: '/shared/use-cases/timers.ts', name: 'expireHeld', fn: 'timer' },
  { file: '/shared/use-cases/control.ts', name: 'handleControl', fn: 'control' },
  { file: '/shared/partitions/distributor.ts', name: 'cycle', fn: 'distributor' },
];

/** Where a call no function makes comes from, by the first matching frame from the caller outwards. */
const OTHER_ORIGINS: readonly { file: string; caller: OtherCaller }[] = [
  { file: '/local/provision.ts', caller: 'provisioning' },
  { file: '/shared/client/', caller: 'client' },
  { file: '/local/cli/', caller: 'cli' },
  { file: '/functions/handlers.ts', caller: 'handler' },
];

interface Frame {
  readonly file: string;
  readonly name: string;
}

/** The current (async) stack, innermost first, as file and function name. */
function currentStack(): Frame[] {
  const saved = { limit: Error.stackTraceLimit, prepare: Error.prepareStackTrace };
  const holder: { stack?: unknown } = {};
  try {
    Error.stackTraceLimit = 200;
    Error.prepareStackTrace = (_error, sites) =>
      sites.map((site) => ({
        file: String(site.getFileName() ?? ''),
        name: String(site.getFunctionName() ?? site.getMethodName() ?? ''),
      }));
    Error.captureStackTrace(holder, currentStack);
    return (holder.stack ?? []) as Frame[];
  } finally {
    Error.stackTraceLimit = saved.limit;
    Error.prepareStackTrace = saved.prepare;
  }
}

/** The repository's root, as the stack names files. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECORDER = fileURLToPath(import.meta.url);

function pathOf(file: string): string {
  return file.startsWith('file://') ? fileURLToPath(file) : file;
}

function isEntry(frame: Frame, entry: (typeof ENTRY_POINTS)[number]): boolean {
  return frame.name === entry.name && frame.file.endsWith(entry.file);
}

/**
 * Who makes the call now being sent (see the module's comment), in this order:
 * - a call the test's own code makes (its innermost caller outside the SDK is under `test/`: a
 *   producer or responder it plays, an assertion, a hook it runs inside a handler) is the test's;
 * - else the innermost entry point on the stack: a test that runs one function's use case inside
 *   another's (a fan-out landing inside a timer's claim, to race them) calls as the inner one;
 *   the timer's entry points inside the sweep (it expires what is due) are the sweeper's;
 * - else the function whose invocation this is ({@link runAs});
 * - else where the call comes from (provisioning, the client library, the CLI, a handler), or the test.
 */
export function currentCaller(): Caller {
  const stack = currentStack().map((f) => ({ ...f, file: pathOf(f.file) }));
  const caller = stack.find(
    (f) => f.file.startsWith(ROOT) && !f.file.includes('/node_modules/') && f.file !== RECORDER,
  );
  if (caller?.file.startsWith(`${ROOT}test/`)) return 'test';
  for (let i = 0; i < stack.length; i++) {
    const frame = stack[i] as Frame;
    const entry = ENTRY_POINTS.find((e) => isEntry(frame, e));
    if (!entry) continue;
    const sweep = ENTRY_POINTS.find((e) => e.name === 'sweep') as (typeof ENTRY_POINTS)[number];
    if (entry.fn === 'timer' && stack.slice(i + 1).some((f) => isEntry(f, sweep))) return 'sweeper';
    return entry.fn;
  }
  const fn = running.getStore();
  if (fn) return fn;
  for (const frame of stack) {
    const origin = OTHER_ORIGINS.find((o) => frame.file.includes(o.file));
    if (origin) return origin.caller;
  }
  return 'test';
}

// ---- recording ----

/**
 * The environment variable naming the directory the test workers write their records to: set by
 * the integration project's global setup (test/support/policy-global-setup.ts) before the workers
 * start; without it nothing is recorded.
 */
export const CALLS_DIR_VARIABLE = 'FANIN_CALLS_DIR';

/** The deployments the calls were made in: a fanin's prefix, its topology options and definitions. */
export interface RecordedTopology {
  readonly kind: 'topology';
  readonly prefix: string;
  /** The topology options that shape the stack (replyPartitions, fifoReplies, drains, ...). */
  readonly options: Record<string, unknown>;
  /** The queues the definitions fan out to, by name (or URL), as the definitions name them. */
  readonly targets: readonly string[];
  /** The targets of the definitions that send cancellation notices (`cancelOutstanding`). */
  readonly cancelTargets?: readonly string[];
  /** Whether a definition that cancels takes its recipients from the request. */
  readonly cancelsNamed?: boolean;
  /** The test file that started it (for the report). */
  readonly testFile?: string;
}

type Sink = { calls: Map<string, { call: RecordedCall; count: number }>; lines: string[]; file: string };
const SINK = Symbol.for('fanin.callRecorder');
type WithSink = typeof globalThis & { [SINK]?: Sink };

/**
 * Wraps `send` of every AWS SDK client of this process (once): each call's authorizations, by
 * {@link currentCaller}, are counted and written to `dir` by {@link flushRecords}. @returns false
 * when it was installed already.
 */
export function installRecorder(dir: string): boolean {
  const global = globalThis as WithSink;
  if (global[SINK]) return false;
  mkdirSync(dir, { recursive: true });
  const sink: Sink = {
    calls: new Map(),
    lines: [],
    file: join(dir, `calls-${process.pid}-${Date.now().toString(36)}.jsonl`),
  };
  global[SINK] = sink;
  // Every SDK v3 client (SQS, DynamoDB and its document client, S3, EventBridge) is a smithy
  // `Client`: its prototype's `send` is the one every call goes through.
  const base = Object.getPrototypeOf(SQSClient.prototype) as { send: (...args: unknown[]) => unknown };
  const send = base.send;
  base.send = function recorded(this: unknown, ...args: unknown[]) {
    const command = args[0] as { constructor: { name: string }; input?: Input } | undefined;
    try {
      const caller = currentCaller();
      for (const call of authorizationsOf(
        caller,
        command?.constructor.name ?? 'unknown',
        command?.input ?? {},
      )) {
        const key = JSON.stringify(call);
        const seen = sink.calls.get(key);
        if (seen) seen.count += 1;
        else sink.calls.set(key, { call, count: 1 });
      }
    } catch {
      // Recording never fails a call; an unreadable input is left out.
    }
    return send.apply(this, args);
  };
  return true;
}

/** Records a deployment the calls may be made in (see {@link RecordedTopology}). */
export function recordTopology(topology: Omit<RecordedTopology, 'kind'>): void {
  const sink = (globalThis as WithSink)[SINK];
  sink?.lines.push(JSON.stringify({ kind: 'topology', ...topology }));
}

/** The calls recorded in this process since the last {@link flushRecords} (empty when not recording). */
export function unflushedCalls(): RecordedCall[] {
  const sink = (globalThis as WithSink)[SINK];
  return sink ? [...sink.calls.values()].map(({ call, count }) => ({ ...call, count })) : [];
}

/** Whether {@link installRecorder} runs in this process. */
export function recording(): boolean {
  return (globalThis as WithSink)[SINK] !== undefined;
}

/** Appends what was recorded since the last flush to this process's file (one JSON line each). */
export function flushRecords(): void {
  const sink = (globalThis as WithSink)[SINK];
  if (!sink) return;
  const lines = [
    ...sink.lines,
    ...[...sink.calls.values()].map(({ call, count }) => JSON.stringify({ ...call, count })),
  ];
  sink.lines = [];
  sink.calls.clear();
  if (lines.length > 0) appendFileSync(sink.file, `${lines.join('\n')}\n`);
}
