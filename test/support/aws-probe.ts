import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OutputRole } from '../../shared/topology/topology.ts';

/**
 * SDK-level instruments for the adversity tests, installed as AWS SDK v3 middleware on the clients
 * a {@link FaninUnderTest} gives its context (and, for the recorder only, on the clients the test
 * itself uses as producer and responder):
 *
 * - a **recorder** that sees every output publication and every message sent to an input queue
 *   *below* any deduplication (SQS FIFO drops a re-sent output for five minutes; the recorder
 *   does not), so a test can count publications per output and id and compare their content;
 * - **failpoints**: every AWS call the system makes is counted (`DynamoDB.PutItem`,
 *   `SQS.SendMessageBatch`, `S3.GetObject`, `EventBridge.PutEvents`, …) and one of them can be
 *   made to crash `before` it is sent (the process died before the call) or `after` it reached the
 *   emulator (the write landed, the Lambda died before it saw the answer);
 * - **pause points**: one matching call is held on a promise the test releases (a Lambda paused
 *   past its lease);
 * - **faults**: a call that matches a rule fails every time (a persistent channel outage, a
 *   poison item), and an optional EventBridge stand-in that accepts `PutEvents` without an
 *   endpoint.
 */

/** The error a failpoint throws: stands for a Lambda that died around an external call. */
export class InjectedCrash extends Error {
  public constructor(public readonly call: string) {
    super(`injected crash at ${call}`);
    this.name = 'InjectedCrash';
  }
}

/** An error a fault rule throws in place of a call (an outage of one channel, a poison item). */
export class InjectedFault extends Error {
  public readonly $metadata = { httpStatusCode: 503 };
  public readonly $fault = 'server';
  public constructor(public readonly call: string) {
    super(`injected fault at ${call}`);
    this.name = 'ServiceUnavailable';
  }
}

/** Where a crash is injected relative to its call. */
export type CrashMode = 'before' | 'after';

/** What the probe knows of one AWS call. */
export interface AwsCall {
  /** Sequence number over every call and publication the probe saw (system and test side). */
  readonly seq: number;
  /** `Service.Operation`, e.g. `DynamoDB.TransactWriteItems`, `SQS.SendMessage`. */
  readonly name: string;
  /** Whether the system under test made it (failpoints count only those). */
  readonly system: boolean;
  /** For SQS calls: the role of the queue (`completed`, `ingress`, `reply`, …), or `other`. */
  readonly queueRole?: string;
  /** Partition keys (`A#<id>`, …) the call names: what a DynamoDB call touches. */
  readonly keys: readonly string[];
  /** The command input (as the caller passed it). */
  readonly input: Record<string, unknown>;
  /** Set once the call returned: `ok`, or the error's name. */
  outcome?: string;
  /** The command output, once the call returned (e.g. the messages a receive took, with their receipt handles). */
  output?: Record<string, unknown>;
  /** Set when a failpoint crashed this call. */
  crashed?: CrashMode;
}

/** One output publication, as it reached SQS or EventBridge. */
export interface Publication {
  readonly seq: number;
  /** The output queue's role, or `eventbridge` for a PutEvents entry. */
  readonly channel: OutputRole | 'eventbridge';
  /** The parsed body (claim-check pointers resolved at the time of sending). */
  readonly body: Record<string, unknown> & { id?: string; type?: string; aggregateId?: string };
  /** The body as text, for comparing content. */
  readonly text: string;
}

/** One message sent to an input (ingress, reply partition, backlog, control) queue. */
export interface SentMessage {
  readonly seq: number;
  readonly queueUrl: string;
  readonly role: string;
  readonly body: string;
  readonly attributes: Record<string, { DataType?: string; StringValue?: string }>;
  /** The id SQS gave it (from the response). */
  readonly messageId?: string;
  /** Set when the test (producer, responder, replay) sent it, not the system. */
  readonly bySystem: boolean;
}

/** Picks calls: by name, by queue role, by the aggregate they touch, or any predicate. */
export interface CallMatcher {
  readonly name?: string;
  readonly queueRole?: string;
  /** The call names this partition key (e.g. `A#agg-1`) or mentions this aggregate id. */
  readonly touches?: string;
  readonly where?: (call: AwsCall) => boolean;
}

interface Failpoint {
  readonly at: number | CallMatcher;
  readonly mode: CrashMode;
  /** With a matcher: the n-th matching call (1-based). */
  readonly nth: number;
  seen: number;
  fired?: AwsCall;
}

interface Pause {
  readonly matcher: CallMatcher;
  readonly nth: number;
  seen: number;
  readonly reached: Promise<AwsCall>;
  readonly onReached: (call: AwsCall) => void;
  readonly released: Promise<void>;
  readonly release: () => void;
}

interface Fault {
  readonly matcher: CallMatcher;
  readonly error?: (call: AwsCall) => Error;
}

/** A pause the test controls. */
export interface PauseHandle {
  /** Resolves when the matching call arrives (and is held). */
  readonly reached: Promise<AwsCall>;
  /** Lets the held call go on to the emulator. */
  release(): void;
}

/** The output queue roles, the ones publications are recorded for. */
export const OUTPUT_ROLES: readonly OutputRole[] = [
  'completed',
  'timed-out',
  'status',
  'error',
  'late',
  'unknown',
];
/** The terminal outputs: a result (or a failure) of an aggregate goes to exactly one of them. */
export const TERMINAL_ROLES: readonly OutputRole[] = ['completed', 'timed-out', 'status', 'error'];
const SQS_POINTER_CLASS = 'software.amazon.payloadoffloading.PayloadS3Pointer';

type Handler = (args: { input: Record<string, unknown> }) => Promise<{ output: unknown; response: unknown }>;
interface MiddlewareContext {
  readonly clientName?: string;
  readonly commandName?: string;
}
interface Stack {
  add(
    middleware: (next: Handler, context: MiddlewareContext) => Handler,
    options: { step: 'initialize' | 'build'; name: string; priority?: 'high' | 'low'; override?: boolean },
  ): void;
}

export class AwsProbe {
  /** Every AWS call made through an instrumented client, in order. */
  public readonly calls: AwsCall[] = [];
  /** Every output publication, in order. */
  public readonly published: Publication[] = [];
  /** Every message sent to an input queue, in order. */
  public readonly sent: SentMessage[] = [];
  /** Calls the system made since the current failpoint scenario was armed. */
  public systemCalls = 0;
  private seq = 0;
  private failpoint: Failpoint | undefined;
  private readonly pauses: Pause[] = [];
  private readonly faults: Fault[] = [];
  private eventBridgeStub = false;
  private readonly roles = new Map<string, string>();

  /** @param s3 a client of the test's own, to read claim-check objects of outputs when they are sent */
  public constructor(private readonly s3?: S3Client) {}

  /** Names a queue URL's role (output role, `ingress`, `reply`, `backlog`, `control`, …). */
  public setRole(queueUrl: string, role: string): void {
    this.roles.set(queueUrl, role);
  }

  /** Installs the probe on clients the system under test uses: failpoints, pauses, faults, recorder. */
  public instrumentSystem(clients: {
    sqs: SQSClient;
    dynamo: DynamoDBDocumentClient;
    s3?: S3Client;
    eventBridge?: EventBridgeClient;
  }): void {
    for (const client of [clients.sqs, clients.dynamo, clients.s3, clients.eventBridge]) {
      if (client) this.install(client.middlewareStack as unknown as Stack, true);
    }
  }

  /** Installs the recorder only, on a client the test uses as producer or responder. */
  public instrumentTest(client: SQSClient): void {
    this.install(client.middlewareStack as unknown as Stack, false);
  }

  // ---- failpoints ----

  /**
   * Arms one crash: at the k-th system call from now (a number), or at the `nth` call matching
   * `matcher`. Resets the count of system calls. Replaces a failpoint still armed.
   */
  public crashAt(at: number | CallMatcher, mode: CrashMode, nth = 1): void {
    this.systemCalls = 0;
    this.failpoint = { at, mode, nth, seen: 0 };
  }

  /** The call a failpoint crashed since it was armed, if it fired. */
  public get crashed(): AwsCall | undefined {
    return this.failpoint?.fired;
  }

  /** Disarms the failpoint; returns the call it crashed, if any. */
  public disarm(): AwsCall | undefined {
    const fired = this.failpoint?.fired;
    this.failpoint = undefined;
    return fired;
  }

  // ---- pause points ----

  /** Holds the `nth` system call matching `matcher` until the test releases it. */
  public pauseAt(matcher: CallMatcher, nth = 1): PauseHandle {
    let onReached: (call: AwsCall) => void = () => undefined;
    let release: () => void = () => undefined;
    const reached = new Promise<AwsCall>((resolve) => {
      onReached = resolve;
    });
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pause: Pause = { matcher, nth, seen: 0, reached, onReached, released, release };
    this.pauses.push(pause);
    return {
      reached,
      release: () => {
        this.pauses.splice(this.pauses.indexOf(pause), 1);
        release();
      },
    };
  }

  // ---- faults ----

  /** Makes every system call matching `matcher` fail (until the returned function is called). */
  public failEvery(matcher: CallMatcher, error?: (call: AwsCall) => Error): () => void {
    const fault: Fault = { matcher, ...(error ? { error } : {}) };
    this.faults.push(fault);
    return () => {
      const index = this.faults.indexOf(fault);
      if (index >= 0) this.faults.splice(index, 1);
    };
  }

  /**
   * Answers `EventBridge.PutEvents` here instead of an endpoint: every entry accepted (and
   * recorded). For tests of EventBridge outputs that need no emulator of it.
   */
  public stubEventBridge(on = true): void {
    this.eventBridgeStub = on;
  }

  // ---- recorder ----

  /** Publications whose body names this aggregate (its result, late, unknown and error outputs). */
  public publicationsOf(aggregateId: string): Publication[] {
    return this.published.filter(
      (p) => p.body.aggregateId === aggregateId || p.body.id?.startsWith(`${aggregateId}/`),
    );
  }

  /** System calls after a sequence number (e.g. after a pause was released). */
  public callsAfter(seq: number): AwsCall[] {
    return this.calls.filter((c) => c.seq > seq && c.system);
  }

  /** The current sequence number: everything recorded later has a greater one. */
  public get now(): number {
    return this.seq;
  }

  private install(stack: Stack, system: boolean): void {
    stack.add((next, context) => async (args) => this.intercept(next, context, args, system), {
      step: 'initialize',
      name: 'faninProbe',
      priority: 'high',
      override: true,
    });
  }

  private async intercept(
    next: Handler,
    context: MiddlewareContext,
    args: { input: Record<string, unknown> },
    system: boolean,
  ): Promise<{ output: unknown; response: unknown }> {
    const service = (context.clientName ?? 'Unknown').replace(/Client$/, '');
    const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
    const input = args.input;
    const queueUrl = typeof input.QueueUrl === 'string' ? input.QueueUrl : undefined;
    const call: AwsCall = {
      seq: ++this.seq,
      name: `${service}.${operation}`,
      system,
      ...(queueUrl ? { queueRole: this.roles.get(queueUrl) ?? 'other' } : {}),
      keys: service === 'DynamoDB' ? partitionKeys(input) : [],
      input,
    };
    this.calls.push(call);
    if (system) {
      this.systemCalls += 1;
      for (const pause of [...this.pauses]) {
        if (matches(pause.matcher, call)) {
          pause.seen += 1;
          if (pause.seen === pause.nth) {
            pause.onReached(call);
            await pause.released;
          }
        }
      }
      for (const fault of this.faults) {
        if (matches(fault.matcher, call)) {
          call.outcome = 'InjectedFault';
          throw fault.error ? fault.error(call) : new InjectedFault(call.name);
        }
      }
    }
    const crash = system ? this.crashHere(call) : undefined;
    if (crash === 'before') {
      call.crashed = 'before';
      call.outcome = 'InjectedCrash';
      throw new InjectedCrash(`${call.name} (before, call ${call.seq})`);
    }
    let result: { output: unknown; response: unknown };
    if (call.name === 'EventBridge.PutEvents' && this.eventBridgeStub) {
      const entries = (input.Entries as unknown[] | undefined) ?? [];
      result = {
        output: {
          $metadata: { httpStatusCode: 200 },
          FailedEntryCount: 0,
          Entries: entries.map((_, i) => ({ EventId: `stub-${call.seq}-${i}` })),
        },
        response: {},
      };
    } else {
      try {
        result = await next(args);
      } catch (error) {
        call.outcome = (error as Error).name ?? 'Error';
        throw error;
      }
    }
    call.outcome = 'ok';
    call.output = result.output as Record<string, unknown>;
    await this.record(call, result.output as Record<string, unknown>, system);
    if (crash === 'after') {
      call.crashed = 'after';
      throw new InjectedCrash(`${call.name} (after, call ${call.seq})`);
    }
    return result;
  }

  private crashHere(call: AwsCall): CrashMode | undefined {
    const failpoint = this.failpoint;
    if (!failpoint || failpoint.fired) return undefined;
    if (typeof failpoint.at === 'number') {
      if (this.systemCalls !== failpoint.at) return undefined;
    } else {
      if (!matches(failpoint.at, call)) return undefined;
      failpoint.seen += 1;
      if (failpoint.seen !== failpoint.nth) return undefined;
    }
    failpoint.fired = call;
    return failpoint.mode;
  }

  private async record(call: AwsCall, output: Record<string, unknown>, system: boolean): Promise<void> {
    const { input } = call;
    if (call.name === 'SQS.SendMessage' || call.name === 'SQS.SendMessageBatch') {
      const role = call.queueRole ?? 'other';
      const single = call.name === 'SQS.SendMessage';
      const entries = (single ? [input] : ((input.Entries as Record<string, unknown>[]) ?? [])).map(
        (e, i) => ({
          entry: e,
          messageId: single
            ? (output.MessageId as string | undefined)
            : ((output.Successful as { Id?: string; MessageId?: string }[] | undefined) ?? []).find(
                (s) => s.Id === (e.Id ?? String(i)),
              )?.MessageId,
          ok:
            single || ((output.Successful as { Id?: string }[] | undefined) ?? []).some((s) => s.Id === e.Id),
        }),
      );
      for (const { entry, messageId, ok } of entries) {
        if (!ok) continue;
        const body = String(entry.MessageBody ?? '');
        if ((OUTPUT_ROLES as readonly string[]).includes(role)) {
          await this.recordPublication(role as OutputRole, body, call.seq);
        } else {
          this.sent.push({
            seq: call.seq,
            queueUrl: String(input.QueueUrl),
            role,
            body,
            attributes: (entry.MessageAttributes ?? {}) as SentMessage['attributes'],
            ...(messageId ? { messageId } : {}),
            bySystem: system,
          });
        }
      }
    } else if (call.name === 'EventBridge.PutEvents') {
      const entries = (input.Entries as { Detail?: string }[] | undefined) ?? [];
      const results = (output.Entries as { ErrorCode?: string }[] | undefined) ?? [];
      entries.forEach((entry, i) => {
        if (results[i]?.ErrorCode) return;
        const text = entry.Detail ?? '{}';
        this.published.push({
          seq: call.seq,
          channel: 'eventbridge',
          body: parse(text),
          text: canonical(text),
        });
      });
    }
  }

  private async recordPublication(role: OutputRole, text: string, seq: number): Promise<void> {
    let body = text;
    const pointer = pointerOf(text);
    if (pointer && this.s3) {
      const object = await this.s3.send(
        new GetObjectCommand({ Bucket: pointer.s3BucketName, Key: pointer.s3Key }),
      );
      body = (await object.Body?.transformToString()) ?? text;
    }
    this.published.push({ seq, channel: role, body: parse(body), text: canonical(body) });
  }
}

/** True when a call matches every field the matcher sets. */
export function matches(matcher: CallMatcher, call: AwsCall): boolean {
  if (matcher.name !== undefined && matcher.name !== call.name) return false;
  if (matcher.queueRole !== undefined && matcher.queueRole !== call.queueRole) return false;
  if (matcher.touches !== undefined) {
    const key = matcher.touches.startsWith('A#') ? matcher.touches : `A#${matcher.touches}`;
    if (!call.keys.includes(key) && !JSON.stringify(call.input).includes(matcher.touches)) return false;
  }
  if (matcher.where && !matcher.where(call)) return false;
  return true;
}

/** DynamoDB writes: the calls that change state. */
export const DYNAMO_WRITES = new Set([
  'DynamoDB.PutItem',
  'DynamoDB.UpdateItem',
  'DynamoDB.DeleteItem',
  'DynamoDB.TransactWriteItems',
  'DynamoDB.BatchWriteItem',
]);

/** Every `pk` value an input names, in document or marshalled form. */
function partitionKeys(input: unknown): string[] {
  const keys = new Set<string>();
  const walk = (value: unknown, depth: number): void => {
    if (depth > 8 || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const v of value) walk(v, depth + 1);
      return;
    }
    for (const [name, v] of Object.entries(value)) {
      if (name === 'pk') {
        if (typeof v === 'string') keys.add(v);
        else if (v && typeof v === 'object' && typeof (v as { S?: unknown }).S === 'string')
          keys.add((v as { S: string }).S);
      } else if (name === 'ExpressionAttributeValues' && v && typeof v === 'object') {
        for (const ev of Object.values(v)) {
          const s = typeof ev === 'string' ? ev : (ev as { S?: unknown } | null)?.S;
          if (typeof s === 'string' && /^[A-Z]#/.test(s)) keys.add(s);
        }
      } else walk(v, depth + 1);
    }
  };
  walk(input, 0);
  return [...keys];
}

function pointerOf(text: string): { s3BucketName: string; s3Key: string } | undefined {
  if (!text.startsWith('[')) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed) && parsed[0] === SQS_POINTER_CLASS)
      return parsed[1] as { s3BucketName: string; s3Key: string };
  } catch {
    // not a pointer
  }
  return undefined;
}

function parse(text: string): Publication['body'] {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' ? (value as Publication['body']) : { value };
  } catch {
    return { unparsed: text };
  }
}

/** JSON text with object keys sorted, so equal content compares equal whatever the key order. */
export function canonical(text: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(text)));
  } catch {
    return text;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
