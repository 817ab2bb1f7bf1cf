import type { SQSEvent } from 'aws-lambda';
import {
  makeControlHandler,
  makeFanOutHandler,
  makeReplyHandler,
  makeSweeperHandler,
  makeTimerHandler,
} from '../../../functions/handlers.ts';
import {
  findConfigFile,
  loadLocalConfig,
  type ResolvedLocalConfig,
  resolveLocalConfig,
} from '../../../local/config.ts';
import { TIMER_HORIZON_MS } from '../../../shared/adapters/sqs-timers.ts';
import { SortKey } from '../../../shared/adapters/state-keys.ts';
import { createContext } from '../../../shared/app.ts';
import type { RuntimeConfig } from '../../../shared/config.ts';
import { CancellationAttribute } from '../../../shared/engine/cancellation.ts';
import type { DefinitionInput } from '../../../shared/engine/definition.ts';
import { HEARTBEAT_ATTRIBUTE } from '../../../shared/engine/responders.ts';
import { ATTEMPT_ATTRIBUTE } from '../../../shared/engine/retries.ts';
import { topologyOptionsOf } from '../../../shared/topology/options.ts';
import {
  describeTopology,
  OUTPUT_ROLES,
  type OutputRole,
  QueueRole,
  type Topology,
  type TopologyOptions,
} from '../../../shared/topology/topology.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import { ARMING_MARGIN_MS } from '../../../shared/use-cases/timers.ts';
import {
  clientsOver,
  type DynamoDbModel,
  type EventBridgeModel,
  faultFreeModels,
  type S3Model,
  type SqsModel,
} from '../../../sim/models/index.ts';
import { Random } from '../../../sim/random.ts';
import { eventRecordOf, Storage } from '../../../sim/storage.ts';

/**
 * The test kit's engine: one deployment of fanin in memory, the production handlers
 * (functions/handlers.ts) and their use cases and adapters over the simulation's models of SQS,
 * DynamoDB, S3 and EventBridge (sim/models), with a clock only the test moves. Nothing runs
 * until the test acts: each action delivers what it sent through the consumer that would take it
 * on AWS (fan-out, reply partitions, control, timers) until every queue fanin consumes is still,
 * and {@link FaninSimulation.advance} moves the clock from one due moment to the next (a delayed
 * timer message, a message coming back after its visibility timeout, a sweep of the minute),
 * delivering what each makes due. The models' chaos (duplicate receives, short receives, stale
 * reads) is off: what happens twice is what the test asked for.
 */

/** A time span: milliseconds, or a text such as `'500ms'`, `'3s'`, `'10m'`, `'2h'`, `'1d'`, `'1m30s'`. */
export type Duration = number | string;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration in milliseconds. @throws Error for a text that is not one */
export function durationMs(duration: Duration): number {
  if (typeof duration === 'number') {
    if (!Number.isFinite(duration) || duration < 0)
      throw new Error(`duration must be >= 0 ms (given ${duration})`);
    return duration;
  }
  const text = duration.trim();
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text.replace(/\s+/g, '')) {
    throw new Error(`duration "${duration}" is not a number of ms, s, m, h or d (e.g. '3s', '1m30s')`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2] as string] as number), 0);
}

/** The instant every simulation starts at unless told otherwise (2026-01-01T00:00:00Z). */
export const DEFAULT_START = Date.UTC(2026, 0, 1);

/** Options of {@link simulate}. */
export interface SimulateOptions {
  /** The virtual clock's first instant, epoch ms. @default {@link DEFAULT_START} */
  readonly start?: number;
  /** Prefix of fanin's queue and table names (as in fanin.config.ts). @default 'kit' */
  readonly prefix?: string;
  /** Seed of the models' ids (message ids, receipt handles): runs with one seed are identical. @default 1 */
  readonly seed?: number;
  /** The rest of the topology, as the CDK construct and fanin.config.ts take it (reply partitions, FIFO replies, ...). */
  readonly topology?: Omit<TopologyOptions, 'definitions' | 'prefix'>;
  /** Payload size above which the claim check (S3) is used, bytes. @default 262,144 */
  readonly claimCheckThresholdBytes?: number;
  /**
   * The recipients' queues that exist (queue names, e.g. `fanin-bank-1`), besides fanin's own: a
   * deployment does not create them, they are the responders'. A request that names a queue not
   * among them is refused as production refuses it (the error output, nothing opened).
   * {@link FaninSimulation.createQueue} and {@link FaninSimulation.deleteQueue} change them later.
   * @default the queues the definitions name (each `recipient-list` recipient, each splitter target);
   *   with {@link fromConfig}, the file's `responderQueues` as `npm start` creates them (`<prefix>-<name>`)
   */
  readonly responderQueues?: readonly string[];
}

/** A message body sent as these exact characters, not as JSON: {@link raw}. */
export interface RawBody {
  readonly raw: string;
}

const RAW_BODIES = new WeakSet<object>();

/**
 * A body sent as the text given, not JSON-encoded: `run.reply('bank-1', raw('not json'))`, or
 * `run.send(raw('{'), attributes)`, for what a broken responder sends (fanin sends such a reply
 * to the error output: "body is not valid JSON").
 */
export function raw(text: string): RawBody {
  const body = { raw: text };
  RAW_BODIES.add(body);
  return body;
}

/** A message's text: a {@link raw} body as given, anything else as JSON. */
function bodyText(body: unknown): string {
  if (typeof body === 'object' && body !== null && RAW_BODIES.has(body)) return (body as RawBody).raw;
  return JSON.stringify(body);
}

/** A request as a producer sends it to the ingress queue (docs/wire-contract.md). */
export interface KitRequest {
  /** The definition's name; may be left out when the simulation has one definition. */
  readonly definition?: string;
  readonly aggregateId?: string;
  readonly requestId?: string;
  readonly payload?: unknown;
  readonly items?: readonly unknown[];
  readonly expected?: number;
  readonly recipients?: readonly string[];
  readonly parameters?: Record<string, unknown>;
  /** Any other field of the body (e.g. a `quorum` a predicate reads as `request.body.quorum`). */
  readonly [field: string]: unknown;
}

/** A sub-request fanin sent a recipient, as the recipient receives it. */
export interface SentSubRequest {
  /** The recipient's queue name (e.g. `fanin-bank-2`). */
  readonly recipient: string;
  readonly aggregateId: string;
  readonly replyId: string;
  readonly definition: string;
  /** The body, parsed when it is JSON. */
  readonly body: unknown;
  /** Every message attribute (the `fanin-*` ones a responder copies onto its reply). */
  readonly attributes: Readonly<Record<string, string>>;
  /** When fanin sent it, epoch ms of the virtual clock. */
  readonly sentAt: number;
  /** Its attempt: 1 for the fan-out's send, 2 on for a retry (`responders.retry`, attribute `fanin-attempt`). */
  readonly attempt: number;
}

/** Who a reply answers: a recipient by name, a sub-request, or an aggregate and reply id (a reply fanin has not asked for yet). */
export type ReplyTarget =
  | string
  | SentSubRequest
  | { readonly aggregateId?: string; readonly replyId?: string; readonly definition?: string };

/** How a reply is sent. */
export interface ReplyOptions {
  /** The aggregate whose sub-request to answer when the recipient was asked by several. @default the last request's (else any aggregate's, when that one asked the recipient nothing) */
  readonly aggregateId?: string;
  /** How many times the responder sends it (distinct SQS messages, one reply id): 2 is a duplicate. @default 1 */
  readonly copies?: number;
  /**
   * How many times SQS delivers each copy again after it was handled (a lost delete): the same
   * message, same id and SentTimestamp, back after the queue's visibility timeout, so only an
   * {@link FaninSimulation.advance} past it delivers it. @default 0
   */
  readonly redeliveries?: number;
  /** More message attributes (or overrides of the sub-request's). */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** One message fanin published on an output. */
export interface Publication {
  readonly channel: OutputRole | 'events';
  /** The body, parsed. */
  readonly body: Record<string, unknown>;
  readonly at: number;
}

/** What one handler invocation logged at warn or error level. */
export interface KitLog {
  readonly level: 'warn' | 'error';
  readonly message: string;
  readonly fields: Record<string, unknown>;
  readonly at: number;
}

interface Consumer {
  readonly fn: 'fanout' | 'reply' | 'control' | 'timer';
  readonly url: string;
  readonly queueName: string;
  readonly batchSize: number;
  readonly handler: (event: SQSEvent) => Promise<unknown>;
}

const TERMINAL_TYPES = new Set([
  'fanin.aggregate.completed',
  'fanin.aggregate.timed-out',
  'fanin.aggregate.failed',
  'fanin.aggregate.purged',
]);

/** One deployment of fanin, in memory, under a virtual clock: see {@link simulate}. */
export class FaninSimulation {
  public readonly topology: Topology;
  public readonly config: RuntimeConfig;
  /** The models behind the clients (for what the kit does not wrap; their state is fanin's). */
  public readonly models: {
    readonly sqs: SqsModel;
    readonly dynamodb: DynamoDbModel;
    readonly s3: S3Model;
    readonly eventBridge: EventBridgeModel;
  };
  /** What the handlers logged at warn and error level (info is dropped). */
  public readonly logs: KitLog[] = [];
  private clockMs: number;
  private readonly start: number;
  private readonly storage: Storage;
  private readonly consumers: Consumer[] = [];
  private readonly sweeper: () => Promise<unknown>;
  private readonly outputUrls = new Map<string, OutputRole>();
  private readonly redeliver = new Map<string, number>();
  private readonly published: Publication[] = [];
  /** The recipients' queues the kit created (some perhaps deleted since), whose messages {@link subRequests} reads. */
  private readonly recipientQueues = new Set<string>();
  /** The sub-requests a reply or failure was sent to by recipient name, by aggregate and reply id. */
  private readonly answered = new Set<string>();
  private lastAggregate: string | undefined;
  private lastSweep: number;
  /** Messages each function was handed (every copy and redelivery: below fanin's deduplication). */
  public readonly records: Record<'fanout' | 'reply' | 'control' | 'timer', number> = {
    fanout: 0,
    reply: 0,
    control: 0,
    timer: 0,
  };
  /** When the sweeper ran (epoch ms of the virtual clock), oldest first. */
  public readonly sweeps: number[] = [];
  /** Invocations of each function, for what a test may want to count. */
  public readonly invocations: Record<'fanout' | 'reply' | 'control' | 'timer' | 'sweeper', number> = {
    fanout: 0,
    reply: 0,
    control: 0,
    timer: 0,
    sweeper: 0,
  };

  public constructor(definitions: readonly DefinitionInput[], options: SimulateOptions = {}) {
    this.start = options.start ?? DEFAULT_START;
    this.clockMs = this.start;
    this.lastSweep = this.start;
    const random = new Random(options.seed ?? 1);
    const draw = () => random.next();
    const clock = () => this.clockMs;
    this.topology = topologyOf({ ...(options.topology ?? {}), prefix: options.prefix ?? 'kit', definitions });
    const days = Math.ceil(this.topology.stateLifeSeconds / 86_400) + 1;
    this.models = faultFreeModels(clock, draw, days);
    const named = new Set<string>();
    for (const definition of this.topology.definitions.values()) {
      const fanOut = (definition.fanOut ?? { type: 'none' }) as {
        type: string;
        recipients?: readonly string[];
        target?: string;
      };
      if (fanOut.type === 'recipient-list') for (const r of fanOut.recipients ?? []) named.add(queueName(r));
      if (fanOut.type === 'splitter' && fanOut.target !== undefined) named.add(queueName(fanOut.target));
    }
    const bus = [...this.topology.definitions.values()].some(
      (d) => (d as { outputs?: { eventBridge?: boolean } }).outputs?.eventBridge === true,
    );
    const recipients = options.responderQueues?.map(queueName) ?? [...named];
    this.storage = new Storage(this.models, this.topology, true, bus, recipients);
    for (const name of recipients) this.recipientQueues.add(name);
    this.config = {
      tableName: this.topology.tableName,
      queueUrls: this.storage.queueUrls,
      replyQueueUrls: this.storage.replyQueueUrls,
      definitions: this.topology.definitions,
      partitioning: this.topology.partitioning,
      completionLeaseSeconds: this.topology.completionLeaseSeconds,
      bucketName: this.topology.bucketName,
      ...(bus ? { eventBusName: this.storage.eventBusName } : {}),
      ...(options.claimCheckThresholdBytes !== undefined
        ? { claimCheckThresholdBytes: options.claimCheckThresholdBytes }
        : {}),
    };
    const clients = clientsOver(this.models, (service, command, input, call) => {
      const answer = call();
      this.observe(service, command, input, answer);
      return service === 's3' && command === 'GetObjectCommand' ? streamed(answer) : answer;
    });
    const log =
      (level: 'warn' | 'error') =>
      (message: string, fields?: Record<string, unknown>): void => {
        this.logs.push({ level, message, fields: fields ?? {}, at: this.clockMs });
      };
    // One warm execution environment per function, as a quiet Lambda keeps.
    const context = (): (() => FaninContext) => {
      const ctx = createContext(this.config, clients, {
        clock,
        log: { info: () => {}, warn: log('warn'), error: log('error') },
      });
      return () => ctx;
    };
    for (const role of OUTPUT_ROLES) this.outputUrls.set(this.storage.queueUrls[role], role);
    const { consumers, queues } = this.topology;
    const consume = (
      fn: Consumer['fn'],
      url: string,
      name: string,
      batchSize: number,
      handler: Consumer['handler'],
    ) => this.consumers.push({ fn, url, queueName: name, batchSize, handler });
    const fanOut = makeFanOutHandler(context());
    const control = makeControlHandler(context());
    const timer = makeTimerHandler(context());
    const reply = makeReplyHandler(context());
    consume(
      'fanout',
      this.storage.queueUrls.ingress,
      queues.ingress.name,
      consumers.fanOut.batchSize,
      (e) => {
        this.invocations.fanout += 1;
        return fanOut(e);
      },
    );
    consume('control', this.storage.queueUrls.control, queues.control.name, 1, (e) => {
      this.invocations.control += 1;
      return control(e);
    });
    this.topology.replyConsumers.forEach((spec, i) => {
      const partition = this.topology.replyPartitions[i];
      consume(
        'reply',
        this.storage.replyQueueUrls[i] as string,
        partition?.name ?? `reply-${i}`,
        Math.min(spec.batchSize, 10),
        (e) => {
          this.invocations.reply += 1;
          return reply(e);
        },
      );
    });
    consume('timer', this.storage.queueUrls.timer, queues.timer.name, consumers.timer.batchSize, (e) => {
      this.invocations.timer += 1;
      return timer(e);
    });
    const sweep = makeSweeperHandler(context());
    this.sweeper = () => {
      this.invocations.sweeper += 1;
      return sweep();
    };
  }

  /** The virtual clock, epoch ms. */
  public now(): number {
    return this.clockMs;
  }

  /** Virtual time since the simulation started, ms. */
  public elapsed(): number {
    return this.clockMs - this.start;
  }

  /**
   * A producer sends a request to the ingress queue; the fan-out handles it (its sub-requests are
   * then on the recipients' queues: {@link subRequests}).
   */
  public async request(
    request: KitRequest,
    attributes: Readonly<Record<string, string>> = {},
  ): Promise<void> {
    const definition = request.definition ?? attributes['fanin-definition'] ?? this.onlyDefinition();
    const body = { ...request, definition };
    const known = new Set(this.headers().map((h) => h.aggregateId));
    this.storage.send(this.storage.queueUrls.ingress, JSON.stringify(body), attributes, false);
    await this.settle();
    if (request.aggregateId === undefined && attributes['fanin-aggregate-id'] === undefined) {
      // The id fanin chose (`<definition>-<hash of the request id>`): the header opened last.
      const opened = this.headers().filter((h) => h.definition === definition && !known.has(h.aggregateId));
      const last = opened.sort((a, b) => a.openedAt - b.openedAt).at(-1);
      if (last !== undefined) this.lastAggregate = last.aggregateId;
    } else {
      this.lastAggregate = attributes['fanin-aggregate-id'] ?? request.aggregateId;
    }
  }

  /**
   * The sub-requests fanin has sent, oldest first: all of them, a recipient's (by queue name, or
   * the name without the prefix: `'bank-2'` for `fanin-bank-2`), or one aggregate's.
   */
  public subRequests(recipient?: string, aggregateId?: string): SentSubRequest[] {
    return this.sent().filter(
      (s) =>
        s.attributes[CancellationAttribute.CANCELLED] === undefined &&
        (recipient === undefined || matchesRecipient(s.recipient, recipient)) &&
        (aggregateId === undefined || s.aggregateId === aggregateId),
    );
  }

  /**
   * The cancellation notices fanin has sent (a definition with `cancelOutstanding`, once an
   * aggregate ended), oldest first, as {@link subRequests} selects: each on the queue its
   * sub-request went to, its attributes `fanin-cancelled` (the outcome) and `fanin-completed-by`.
   */
  public cancellations(recipient?: string, aggregateId?: string): SentSubRequest[] {
    return this.sent().filter(
      (s) =>
        s.attributes[CancellationAttribute.CANCELLED] !== undefined &&
        (recipient === undefined || matchesRecipient(s.recipient, recipient)) &&
        (aggregateId === undefined || s.aggregateId === aggregateId),
    );
  }

  /**
   * A responder replies: to a recipient's sub-request (the last request's aggregate unless
   * `options.aggregateId` says), to a given sub-request, or to an aggregate and reply id fanin
   * has not asked (a reply before its request, a self-starting definition's message). The reply
   * carries the sub-request's `fanin-*` attributes, as a responder copies them, and goes to its
   * `fanin-reply-to` (else to the first reply partition); then it is handled.
   *
   * A recipient's name answers its oldest sub-request not answered yet (a splitter sending one
   * recipient three items is answered by three calls, reply ids in order); once each is answered,
   * the name form throws: a repeat names its reply id (`{ aggregateId, replyId }`) or uses
   * `copies`. A `{ aggregateId, replyId, definition }` target sends the definition given, even one
   * that is not the aggregate's (fanin sends such a reply to the error output). A {@link raw} body
   * is sent as its text, not JSON.
   */
  public async reply(to: ReplyTarget, body: unknown, options: ReplyOptions = {}): Promise<void> {
    this.sendReply(this.replyAttributes(to, options), body, options);
    await this.settle();
  }

  /**
   * A responder still working on a sub-request sends a heartbeat (attribute `fanin-heartbeat`, the
   * sub-request's `fanin-*` attributes, an empty JSON body) to its reply queue: it extends that
   * recipient's deadline (a definition's `responders.heartbeatSeconds`) and is never a reply.
   */
  public async heartbeat(to: { readonly aggregateId?: string; readonly replyId: string }): Promise<void> {
    const aggregateId = to.aggregateId ?? this.lastAggregate;
    const asked = this.sent().find((s) => s.aggregateId === aggregateId && s.replyId === to.replyId);
    if (!asked)
      throw new Error(`no sub-request ${to.replyId} of aggregate ${aggregateId} to send a heartbeat for`);
    this.sendReply({ ...faninAttributes(asked.attributes), [HEARTBEAT_ATTRIBUTE]: '1' }, {}, {});
    await this.settle();
  }

  /** A responder sends a failed reply (attribute `fanin-failure` set to `error`), `detail` as its body. */
  public async fail(
    to: ReplyTarget,
    error: string,
    detail: unknown = null,
    options: ReplyOptions = {},
  ): Promise<void> {
    const attributes = { ...this.replyAttributes(to, options), 'fanin-failure': error };
    this.sendReply(attributes, detail, options);
    await this.settle();
  }

  /**
   * A message straight to a reply partition, with exactly the attributes given (a self-starting
   * definition's bid: `run.send({ auctionId: 'lot-7', bidId: 'b1', price: 10 }, { 'fanin-definition': 'auction' })`).
   */
  public async send(
    body: unknown,
    attributes: Readonly<Record<string, string>> = {},
    partition = 0,
  ): Promise<void> {
    const url = this.storage.replyQueueUrls[partition];
    if (url === undefined)
      throw new Error(`no reply partition ${partition} (${this.storage.replyQueueUrls.length} in all)`);
    this.storage.send(url, bodyText(body), attributes, false);
    await this.settle();
  }

  /** An operator's control command to the control queue (`{ command: 'complete', aggregateId }`, purge, list, set-parameters). */
  public async control(command: Record<string, unknown>): Promise<void> {
    this.storage.send(this.storage.queueUrls.control, JSON.stringify(command), {}, false);
    await this.settle();
  }

  /**
   * An external event as EventBridge delivers it to the control queue (the stack's rule for a
   * definition's `externalEventPattern`): `{ source, 'detail-type', detail }`, the rest filled in.
   * The kit does not match the pattern itself: fanin's control handler does.
   */
  public async event(event: {
    source: string;
    'detail-type': string;
    detail?: unknown;
    [field: string]: unknown;
  }): Promise<void> {
    const full = {
      version: '0',
      id: `kit-event-${this.clockMs}-${this.published.length}`,
      account: this.models.sqs.accountId,
      time: new Date(this.clockMs).toISOString(),
      region: this.models.sqs.region,
      resources: [],
      detail: {},
      ...event,
    };
    this.storage.send(this.storage.queueUrls.control, JSON.stringify(full), {}, false);
    await this.settle();
  }

  /**
   * Moves the clock on by `duration`, delivering on the way everything that becomes due, at the
   * moment it does: timer messages (SQS delays), messages back after their visibility timeout,
   * and the sweeper on each minute of the schedule (the topology's `sweepIntervalSeconds`) while
   * some aggregate is due, as production's EventBridge schedule would find it.
   */
  public async advance(duration: Duration): Promise<void> {
    await this.advanceTo(this.clockMs + durationMs(duration));
  }

  /** Moves the clock on to `at` (epoch ms), as {@link advance}. */
  public async advanceTo(at: number): Promise<void> {
    if (at < this.clockMs) throw new Error(`the clock only moves forward (now ${this.clockMs}, asked ${at})`);
    await this.settle();
    for (;;) {
      const next = this.nextDue(at);
      if (next === undefined) break;
      this.clockMs = next.at;
      if (next.sweep) {
        this.lastSweep = next.at;
        this.sweeps.push(next.at);
        await this.sweeper();
      }
      await this.settle();
    }
    this.clockMs = at;
    await this.settle();
  }

  /**
   * Every message fanin published, oldest first, as a consumer of the outputs receives them (a
   * FIFO output drops a repeat of one id within five minutes): of one channel (`completed`,
   * `timed-out`, `late`, `unknown`, `error`, `status`; `events` for the EventBridge bus) or all.
   * Bodies are parsed; a claim-check pointer is read from the bucket.
   */
  public outputs(channel?: OutputRole | 'events'): Record<string, unknown>[] {
    return this.received(channel).map((p) => p.body);
  }

  /** As {@link outputs}, with each message's channel and time. */
  public received(channel?: OutputRole | 'events'): Publication[] {
    this.keepOutputs();
    const out = [...this.kept.values()].filter((p) => channel === undefined || p.channel === channel);
    if (channel === undefined || channel === 'events') {
      for (const p of this.published) if (p.channel === 'events') out.push(p);
    }
    return out.sort((a, b) => a.at - b.at);
  }

  /** Every message the output queues have held, by message id (kept past SQS's retention and the bucket's lifecycle). */
  private readonly kept = new Map<string, Publication>();

  /** Copies what the output queues hold now into {@link kept}, claim-check payloads read from the bucket. */
  private keepOutputs(): void {
    for (const [url, role] of this.outputUrls) {
      for (const m of this.models.sqs.queue(url).messages) {
        if (this.kept.has(m.messageId)) continue;
        const text = this.storage.resolve(m.body, m.attributes as Record<string, { StringValue?: string }>);
        this.kept.set(m.messageId, {
          channel: role,
          body: JSON.parse(text) as Record<string, unknown>,
          at: m.sentAt,
        });
      }
    }
  }

  /** Every send fanin made to an output, repeats included (below the FIFO queues' deduplication). */
  public publications(channel?: OutputRole | 'events'): Publication[] {
    return this.published.filter((p) => channel === undefined || p.channel === channel);
  }

  /**
   * The aggregate's terminal output (completed, timed-out, failed or purged), or undefined while
   * it has none. @param aggregateId default: the last request's aggregate
   */
  public result(aggregateId: string | undefined = this.lastAggregate): Record<string, unknown> | undefined {
    return this.outputs().find((o) => o.aggregateId === aggregateId && TERMINAL_TYPES.has(String(o.type)));
  }

  /** Messages left in fanin's dead-letter queues (each one a message fanin failed five times). */
  public deadLetters(): { queue: string; body: string }[] {
    return this.storage.deadLetters().map(({ queue, body }) => ({ queue, body }));
  }

  /** The aggregates' headers (and tombstones) in the state table. */
  private headers(): { aggregateId: string; definition: string; openedAt: number }[] {
    return this.models.dynamodb
      .items(this.topology.tableName)
      .filter((item) => item.sk === SortKey.HEADER && typeof item.pk === 'string')
      .map((item) => ({
        aggregateId: String(item.pk).slice(2),
        definition: String(item.definition ?? ''),
        openedAt: Number(item.openedAt ?? 0),
      }));
  }

  /** The aggregate the defaults of {@link reply} and {@link result} refer to: the last request's (the id fanin chose when the request named none). */
  public lastAggregateId(): string | undefined {
    return this.lastAggregate;
  }

  private onlyDefinition(): string {
    const names = [...this.topology.definitions.keys()];
    if (names.length !== 1) throw new Error(`name the definition: this simulation has ${names.join(', ')}`);
    return names[0] as string;
  }

  /**
   * A responder creates its queue (a name, or a queue URL's last part): requests naming it are
   * sent from now on. Creating a queue that exists does nothing.
   */
  public createQueue(name: string): void {
    const queue = queueName(name);
    if (!/^[A-Za-z0-9_-]{1,80}(\.fifo)?$/.test(queue)) throw new Error(`"${name}" is not an SQS queue name`);
    this.models.sqs.handle('CreateQueueCommand', {
      QueueName: queue,
      ...(queue.endsWith('.fifo') ? { Attributes: { FifoQueue: 'true' } } : {}),
    });
    this.recipientQueues.add(queue);
  }

  /**
   * A responder deletes its queue, and the sub-requests on it with it: a request naming it is
   * refused from now on (the error output), and a sub-request fanin sends it again (a retry)
   * fails, as on AWS. @throws Error when no such queue exists
   */
  public deleteQueue(name: string): void {
    const queue = queueName(name);
    if (!this.queueExists(queue)) throw new Error(`no queue "${queue}" to delete`);
    this.models.sqs.handle('DeleteQueueCommand', { QueueUrl: this.models.sqs.urlOf(queue) });
  }

  /** Whether a queue of this name exists (fanin's own, or a recipient's). */
  public queueExists(name: string): boolean {
    return this.models.sqs.queueUrls().includes(this.models.sqs.urlOf(queueName(name)));
  }

  /** Every sub-request on the recipients' queues (never consumed: the test answers them). */
  private sent(): SentSubRequest[] {
    const out: SentSubRequest[] = [];
    for (const name of this.recipientQueues) {
      if (!this.queueExists(name)) continue;
      const url = this.models.sqs.urlOf(name);
      for (const m of this.models.sqs.messages(url)) {
        const attributes: Record<string, string> = {};
        for (const [key, value] of Object.entries(m.attributes))
          if (value.StringValue !== undefined) attributes[key] = value.StringValue;
        const text = this.storage.resolve(m.body, m.attributes as Record<string, { StringValue?: string }>);
        out.push({
          recipient: name,
          aggregateId: attributes['fanin-aggregate-id'] ?? '',
          replyId: attributes['fanin-reply-id'] ?? '',
          definition: attributes['fanin-definition'] ?? '',
          body: parsed(text),
          attributes,
          sentAt: m.sentAt,
          attempt: Number(attributes[ATTEMPT_ATTRIBUTE] ?? '1'),
        });
      }
    }
    return out.sort((a, b) => a.sentAt - b.sentAt || Number(a.replyId) - Number(b.replyId));
  }

  private replyAttributes(to: ReplyTarget, options: ReplyOptions): Record<string, string> {
    let attributes: Record<string, string>;
    if (typeof to === 'string') {
      const candidates = this.subRequests(to);
      const aggregateId = options.aggregateId ?? this.lastAggregate;
      const mine = candidates.filter((s) => s.aggregateId === aggregateId);
      const pool = mine.length > 0 || options.aggregateId !== undefined ? mine : candidates;
      // The oldest sub-request not answered yet, as a responder answers each one it receives.
      const chosen = pool.find((s) => !this.answered.has(answerKey(s.aggregateId, s.replyId)));
      if (chosen === undefined && pool.length > 0) {
        const last = pool.at(-1) as SentSubRequest;
        throw new Error(
          `every sub-request to "${to}" for aggregate ${last.aggregateId} has been answered (reply ids ${[
            ...new Set(pool.map((s) => s.replyId)),
          ].join(
            ', ',
          )}); to answer one again, name it: reply({ aggregateId: '${last.aggregateId}', replyId: '${last.replyId}' }, body)`,
        );
      }
      if (chosen === undefined) {
        throw new Error(
          `no sub-request to "${to}"${aggregateId !== undefined ? ` for aggregate ${aggregateId}` : ''}; sent so far: ${
            this.sent()
              .map((s) => `${s.recipient} (${s.aggregateId} #${s.replyId})`)
              .join(', ') || 'none'
          }`,
        );
      }
      attributes = faninAttributes(chosen.attributes);
      this.answered.add(answerKey(chosen.aggregateId, chosen.replyId));
    } else if ('attributes' in to && 'recipient' in to) {
      attributes = faninAttributes(to.attributes);
      this.answered.add(answerKey(to.aggregateId, to.replyId));
    } else {
      const target = to as { aggregateId?: string; replyId?: string; definition?: string };
      const aggregateId = target.aggregateId ?? options.aggregateId ?? this.lastAggregate;
      const asked = this.sent().find((s) => s.aggregateId === aggregateId && s.replyId === target.replyId);
      // A reply naming another definition does not answer the sub-request (fanin refuses it).
      if (asked && (target.definition === undefined || target.definition === asked.definition))
        this.answered.add(answerKey(asked.aggregateId, asked.replyId));
      attributes = {
        ...(asked
          ? faninAttributes(asked.attributes)
          : {
              ...(aggregateId !== undefined ? { 'fanin-aggregate-id': aggregateId } : {}),
              ...(target.replyId !== undefined ? { 'fanin-reply-id': target.replyId } : {}),
            }),
        // The definition the test names is the one the reply carries, as a responder's attribute.
        ...(target.definition !== undefined ? { 'fanin-definition': target.definition } : {}),
      };
    }
    return { ...attributes, ...(options.attributes ?? {}) };
  }

  private sendReply(attributes: Record<string, string>, body: unknown, options: ReplyOptions): void {
    const replyTo = attributes['fanin-reply-to'];
    const url =
      replyTo !== undefined && this.consumers.some((c) => c.url === replyTo)
        ? replyTo
        : (this.storage.replyQueueUrls[0] as string);
    const copies = options.copies ?? 1;
    if (!Number.isInteger(copies) || copies < 1)
      throw new Error(`copies must be a whole number >= 1 (given ${copies})`);
    for (let c = 0; c < copies; c += 1) {
      const id = this.storage.send(url, bodyText(body), attributes, false);
      if ((options.redeliveries ?? 0) > 0) this.redeliver.set(id, options.redeliveries ?? 0);
    }
  }

  /** Delivers every visible message of fanin's queues to its consumer, until none is left. */
  private async settle(): Promise<void> {
    for (let rounds = 0; ; rounds += 1) {
      if (rounds > 10_000)
        throw new Error('the simulation does not settle: a handler keeps sending messages to itself');
      let delivered = false;
      for (const consumer of this.consumers) {
        // Most queues are empty most of the time: look before receiving (a receive copies every message).
        if (!this.models.sqs.queue(consumer.url).messages.some((m) => m.visibleAt <= this.clockMs)) continue;
        const messages = this.storage.receive(consumer.url, consumer.batchSize, undefined);
        if (messages.length === 0) continue;
        delivered = true;
        this.records[consumer.fn] += messages.length;
        const response = (await consumer.handler({
          Records: messages.map((m) => eventRecordOf(m, consumer.queueName, 'kit')),
        })) as { batchItemFailures?: { itemIdentifier: string }[] } | undefined;
        const failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        for (const m of messages) {
          if (failed.has(m.MessageId)) continue;
          const again = this.redeliver.get(m.MessageId) ?? 0;
          if (again > 0) {
            this.redeliver.set(m.MessageId, again - 1);
            continue;
          }
          this.storage.remove(consumer.url, m.ReceiptHandle);
        }
      }
      if (!delivered) {
        this.keepOutputs();
        return;
      }
    }
  }

  /** The next moment up to `limit` when something becomes due: a message visible, or a sweep. */
  private nextDue(limit: number): { at: number; sweep: boolean } | undefined {
    let at = Number.POSITIVE_INFINITY;
    for (const consumer of this.consumers) {
      for (const m of this.models.sqs.queue(consumer.url).messages) {
        if (m.visibleAt > this.clockMs && m.visibleAt < at) at = m.visibleAt;
      }
    }
    const sweepAt = this.nextSweep();
    if (sweepAt <= at) {
      return sweepAt <= limit ? { at: sweepAt, sweep: true } : undefined;
    }
    return at <= limit ? { at, sweep: false } : undefined;
  }

  /**
   * The next minute of the sweeper's schedule on which a sweep does something: one on which a
   * due item not armed yet enters the timers' horizon (the sweep arms items due up to its time
   * plus the horizon less the arming margin, from the watermark the last arming left), or one on
   * which an item is due (the safety net). Production sweeps every minute; the minutes between
   * find nothing to arm and nothing due, so the kit skips them (a 30-day aggregate is not 43,200
   * sweeps).
   */
  private nextSweep(): number {
    const interval = this.topology.sweepIntervalSeconds * 1000;
    const grid = (t: number) => this.start + Math.ceil((t - this.start) / interval) * interval;
    // Never a minute already passed, nor one already swept.
    const floor = Math.max(this.lastSweep + 1, this.clockMs);
    const window = TIMER_HORIZON_MS - ARMING_MARGIN_MS;
    let armedUntil: number | undefined;
    const due: number[] = [];
    for (const item of this.models.dynamodb.items(this.topology.tableName)) {
      if (typeof item.armedUntil === 'number') armedUntil = item.armedUntil;
      if (typeof item.dueAt === 'number' && typeof item.dueShard === 'string') due.push(item.dueAt);
    }
    let at = Number.POSITIVE_INFINITY;
    for (const dueAt of due) {
      at = Math.min(at, grid(Math.max(dueAt, floor)));
      if (armedUntil === undefined || dueAt >= armedUntil)
        at = Math.min(at, grid(Math.max(dueAt - window, floor)));
    }
    return at;
  }

  /** Records each output send that took effect (and each EventBridge entry accepted). */
  private observe(service: string, command: string, input: Record<string, unknown>, answer: unknown): void {
    if (service === 'sqs' && (command === 'SendMessageCommand' || command === 'SendMessageBatchCommand')) {
      const role = this.outputUrls.get(input.QueueUrl as string);
      if (role === undefined) return;
      const failed = new Set(((answer as { Failed?: { Id: string }[] })?.Failed ?? []).map((f) => f.Id));
      const entries =
        command === 'SendMessageCommand' ? [input] : ((input.Entries ?? []) as Record<string, unknown>[]);
      for (const entry of entries) {
        if (failed.has(entry.Id as string)) continue;
        const text = this.storage.resolve(
          entry.MessageBody as string,
          entry.MessageAttributes as Record<string, { StringValue?: string }>,
        );
        this.published.push({
          channel: role,
          body: JSON.parse(text) as Record<string, unknown>,
          at: this.clockMs,
        });
      }
    }
    if (service === 'eventbridge' && command === 'PutEventsCommand') {
      const answers = (answer as { Entries?: { ErrorCode?: string }[] })?.Entries ?? [];
      ((input.Entries ?? []) as { Detail?: string }[]).forEach((entry, i) => {
        if (answers[i]?.ErrorCode) return;
        this.published.push({
          channel: 'events',
          body: JSON.parse(entry.Detail ?? '{}') as Record<string, unknown>,
          at: this.clockMs,
        });
      });
    }
  }
}

/**
 * A simulation of fanin running `definitions` (one definition or several, as the CDK construct
 * and fanin.config.ts take them), in memory, at virtual time.
 */
export function simulate(
  definitions: DefinitionInput | readonly DefinitionInput[],
  options: SimulateOptions = {},
): FaninSimulation {
  const list = Array.isArray(definitions) ? definitions : [definitions as DefinitionInput];
  return new FaninSimulation(list, options);
}

/** A configuration file's definitions, each ready to simulate with the file's topology: {@link fromConfig}. */
export interface ConfiguredSimulations {
  /** The file read (for a configuration given as an object, the name given). */
  readonly file: string;
  /** The prefix its queue names carry (its recipients are `<prefix>-<name>`). */
  readonly prefix: string;
  /** The names of its definitions. */
  readonly names: readonly string[];
  /** A simulation of the named definitions (default: all of them), with the file's prefix and topology. */
  simulate(names?: string | readonly string[], options?: Omit<SimulateOptions, 'prefix'>): FaninSimulation;
}

/**
 * A configuration as `npm start` reads it (fanin.config.ts, .js, .mjs or .json: its definitions
 * for its prefix, every topology option it gives and its responder queues), for
 * {@link ConfiguredSimulations.simulate}: a file's path, or the configuration itself, already imported (`import config from './fanin.config.ts'`; the
 * module's namespace, with its `default` or `config` export, is taken too). Under vitest or jest
 * pass the imported configuration: the kit's own `import()` of a path is Node's, which loads no
 * `.ts` file (Node 20); a path to a `.ts` file needs a runner whose loader Node uses (tsx).
 * @param config default: the first of fanin.config.ts, .js, .mjs, .json in the working directory
 * @param name what messages call an object given (default `'configuration'`)
 */
export async function fromConfig(
  config?: string | object,
  name = 'configuration',
): Promise<ConfiguredSimulations> {
  return configured(
    typeof config === 'object' && config !== null
      ? resolveLocalConfig(configOf(config), name)
      : await loadLocalConfig(await findConfigFile(process.cwd(), config)),
  );
}

/** A configuration module's configuration (its `default` or `config` export), else the object itself. */
function configOf(value: object): unknown {
  const module = value as { default?: unknown; config?: unknown; definitions?: unknown };
  if (module.definitions !== undefined) return value;
  return module.default ?? module.config ?? value;
}

function configured(config: ResolvedLocalConfig): ConfiguredSimulations {
  const names = config.definitions.map((d) => d.name);
  // Every topology option the file gives, as npm start takes them (the prefix is the simulation's own).
  const { prefix: _prefix, ...fileTopology } = topologyOptionsOf(config);
  return {
    file: config.file,
    prefix: config.prefix,
    names,
    simulate: (wanted = names, options = {}) => {
      const list = typeof wanted === 'string' ? [wanted] : wanted;
      for (const name of list)
        if (!names.includes(name))
          throw new Error(`${config.file} has no definition "${name}" (it has ${names.join(', ')})`);
      return new FaninSimulation(
        config.definitions.filter((d) => list.includes(d.name)),
        {
          ...options,
          prefix: config.prefix,
          topology: { ...fileTopology, ...(options.topology ?? {}) },
          responderQueues:
            options.responderQueues ?? config.responderQueues.map((q) => `${config.prefix}-${q}`),
          ...(config.claimCheckThresholdBytes !== undefined && options.claimCheckThresholdBytes === undefined
            ? { claimCheckThresholdBytes: config.claimCheckThresholdBytes }
            : {}),
        },
      );
    },
  };
}

/** Topologies already described, by their options (a suite simulates one definition many times). */
const topologies = new Map<string, Topology>();

/** `describeTopology(options)`, once per distinct options (the topology is read-only). */
function topologyOf(options: TopologyOptions): Topology {
  const key = JSON.stringify(options);
  let topology = topologies.get(key);
  if (topology === undefined) {
    topology = describeTopology(options);
    if (topologies.size > 500) topologies.clear();
    topologies.set(key, topology);
  }
  return topology;
}

/** A queue's name from a recipient (a name, or a queue URL). */
function queueName(recipient: string): string {
  return recipient.includes('/') ? recipient.slice(recipient.lastIndexOf('/') + 1) : recipient;
}

function matchesRecipient(queue: string, asked: string): boolean {
  return queue === asked || queue === queueName(asked) || queue.endsWith(`-${asked}`);
}

function answerKey(aggregateId: string, replyId: string): string {
  return `${aggregateId}\u0000${replyId}`;
}

function faninAttributes(attributes: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(attributes).filter(([name]) => name.startsWith('fanin-')));
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The S3 model's body as the claim check reads it (`for await` over a stream), as sim/storage.ts gives it. */
function streamed(answer: unknown): unknown {
  const body = (answer as { Body?: { transformToByteArray(): Promise<Uint8Array> } & object }).Body;
  if (body === undefined || Symbol.asyncIterator in body) return answer;
  return {
    ...(answer as object),
    Body: Object.assign(body, {
      async *[Symbol.asyncIterator]() {
        yield await body.transformToByteArray();
      },
    }),
  };
}

export { QueueRole };
