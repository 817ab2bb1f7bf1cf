import type { SQSEvent } from 'aws-lambda';
import {
  makeControlHandler,
  makeFanOutHandler,
  makeReplyDrainHandler,
  makeReplyHandler,
  makeSweeperHandler,
  makeTimerHandler,
} from '../functions/handlers.ts';
import { aggregateKey, KEY_SEPARATOR, SortKey } from '../shared/adapters/state-keys.ts';
import { expandPack } from '../shared/adapters/state-packs.ts';
import { createContext } from '../shared/app.ts';
import type { RuntimeConfig } from '../shared/config.ts';
import { CancellationAttribute } from '../shared/engine/cancellation.ts';
import { AggregateStatus } from '../shared/engine/constants.ts';
import { HEARTBEAT_ATTRIBUTE } from '../shared/engine/responders.ts';
import { ATTEMPT_ATTRIBUTE } from '../shared/engine/retries.ts';
import {
  describeTopology,
  OUTPUT_ROLES,
  QueueRole,
  type QueueSpec,
  type Topology,
} from '../shared/topology/topology.ts';
import type { FaninContext } from '../shared/use-cases/context.ts';
import { replyBody } from './actions.ts';
import {
  drawProfile,
  drawPublishPauses,
  type FaultCounts,
  type FaultProfile,
  faultPlan,
  noFaults,
} from './faults.ts';
import { Ledger } from './ledger.ts';
import { Random } from './random.ts';
import { BULK_TARGET } from './scenarios.ts';
import { type PendingCall, Scheduler, type TaskEnd } from './scheduler.ts';
import { createModels, eventRecordOf, type Models, modelClients, Storage } from './storage.ts';
import { drawWorkload, TARGETS, type Workload } from './workload.ts';

/** The scenarios' stream of chance (sim/scenarios.ts), beside the run's own. */
const SCENARIO_STREAM = 0x5ce7a210;
/** The publishers' pauses' stream of chance (sim/faults.ts, drawPublishPauses). */
const PUBLISH_STREAM = 0x9ab1e5e1;
/** Virtual time every run starts at (a fixed instant, so runs compare). */
export const START = Date.UTC(2026, 0, 1);
/** The longest a run may go on in virtual time: past a year's deadline and its lease. */
const HORIZON_MS = 400 * 24 * 3600 * 1000;
/** Scheduling decisions before a run is cut short (a livelock is reported, not waited out). */
const MAX_STEPS = 400_000;
/** Sweeps in a row that find an aggregate overdue before it is declared stuck. */
const STUCK_SWEEPS = 30;
/**
 * Sweeps that failed on one aggregate (its header's `dueFailures`: each failure defers it a
 * minute, so it is never overdue in the index) before it is declared stuck: an aggregate whose
 * every sweep fails (a seal above the item limit) is reported after twenty minutes of virtual time
 * instead of running the sweeper, and its whole read, every minute until the step budget.
 */
const STUCK_FAILURES = 20;
/**
 * The work budget of a run: bytes of the calls' answers (the JSON the trace digests). A run that
 * moves more than this is cut short and reported (`quiescence`), as a livelock is at
 * {@link MAX_STEPS}; a pure function of the seed, like everything else. The heaviest seeds of
 * seeds 1 to 400 (the `members` scenario's) move about 6 MB.
 */
const MAX_BYTES = 1_000_000_000;

/** A function's execution environments: {@link World.environments}. */
interface Environments<H> {
  take(): H;
  give(handler: H, how: TaskEnd): void;
}

/** A consumed queue: Lambda's event source over it. */
interface Consumer {
  readonly role: string;
  readonly url: string;
  readonly spec: QueueSpec;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly handler: Environments<(event: SQSEvent) => Promise<unknown>>;
  inFlight: number;
  polling: boolean;
}

/** One deployment of fanin on the models, its producers, responders and consumers, under one seed. */
export class World {
  public readonly seed: number;
  public readonly random: Random;
  public readonly scheduler: Scheduler;
  public readonly workload: Workload;
  public readonly profile: FaultProfile;
  public readonly faults: FaultCounts = noFaults();
  public readonly ledger = new Ledger();
  public readonly topology: Topology;
  public readonly storage: Storage;
  public readonly models: Models;
  /** The definitions that look after their responders: each one's longest own deadline and heartbeat interval. */
  private readonly lookedAfter = new Map<string, { ownSeconds: number; heartbeatSeconds?: number }>();
  public readonly config: RuntimeConfig;
  private readonly consumers: Consumer[] = [];
  private readonly byUrl = new Map<string, Consumer>();
  private readonly outputRoles = new Map<string, string>();
  private readonly targets = new Set<string>();
  private overdueSweeps = 0;
  public steps = 0;

  public constructor(seed: number, options: { keepTrace?: boolean; big?: boolean } = {}) {
    this.seed = seed >>> 0;
    this.random = new Random(this.seed);
    this.scheduler = new Scheduler({
      start: START,
      random: this.random,
      keepTrace: options.keepTrace ?? false,
    });
    this.workload = drawWorkload(this.random, {
      big: options.big ?? false,
      // The targeted scenarios draw from a stream of their own (sim/scenarios.ts).
      scenarios: new Random(this.seed, SCENARIO_STREAM),
    });
    this.profile = drawProfile(this.random, START);
    for (const definition of this.workload.definitions) {
      const responders = definition.responders;
      if (responders === undefined) continue;
      const own = Math.max(responders.timeoutSeconds ?? 0, ...Object.values(responders.timeouts ?? {}));
      this.lookedAfter.set(definition.name, {
        ownSeconds: own > 0 ? own : (definition.timeoutSeconds ?? 60),
        ...(responders.heartbeatSeconds !== undefined
          ? { heartbeatSeconds: responders.heartbeatSeconds }
          : {}),
      });
    }
    this.topology = describeTopology({
      prefix: 'sim',
      definitions: this.workload.definitions,
      replyPartitions: this.workload.replyPartitions,
      ...(this.workload.drained ? { replyDrainIntervalSeconds: 60 } : {}),
      ...(this.profile.buggify.smallBatches ? { replyBatchSize: 2 } : {}),
    });
    this.models = createModels(() => this.scheduler.now, this.random, this.topology);
    this.storage = new Storage(this.models, this.topology, this.workload.bucket, this.workload.eventBridge, [
      ...TARGETS,
      ...this.workload.scenarios.targets,
    ]);
    this.config = {
      tableName: this.topology.tableName,
      queueUrls: this.storage.queueUrls,
      replyQueueUrls: this.storage.replyQueueUrls,
      definitions: this.topology.definitions,
      partitioning: this.topology.partitioning,
      completionLeaseSeconds: this.topology.completionLeaseSeconds,
      ...(this.workload.eventBridge ? { eventBusName: this.storage.eventBusName } : {}),
      ...(this.workload.bucket ? { bucketName: this.topology.bucketName } : {}),
    };
    const clients = modelClients(this.models, this.scheduler.intercept, this.workload.bucket);
    const trace = this.scheduler.trace;
    const log = (level: string) => (message: string, fields?: Record<string, unknown>) =>
      trace.add(
        `t=${this.scheduler.now} #${this.scheduler.current()?.id ?? '-'} log ${level} ${message} ${JSON.stringify(fields ?? {}).slice(0, 300)}`,
      );
    this.newContext = () => {
      const ctx = createContext(this.config, clients, {
        clock: this.scheduler.clock,
        log: { info: () => {}, warn: log('warn'), error: log('error') },
      });
      this.observeRecordings(ctx);
      return ctx;
    };
    for (const role of OUTPUT_ROLES) this.outputRoles.set(this.storage.queueUrls[role], role);
    for (const name of [...TARGETS, ...this.workload.scenarios.targets])
      this.targets.add(this.storage.urlOf(name));
    if (this.workload.scenarios.targets.includes(BULK_TARGET)) this.bulkUrl = this.storage.urlOf(BULK_TARGET);
    const visibilityMs = this.topology.queues.ingress.visibilityTimeoutSeconds * 1000;
    this.scheduler.faults = faultPlan({
      random: this.random,
      profile: this.profile,
      counts: this.faults,
      now: () => this.scheduler.now,
      leaseMs: this.topology.completionLeaseSeconds * 1000,
      visibilityMs,
      outputChannel: (call) => this.channelOf(call),
      publishPauses: drawPublishPauses(new Random(this.seed, PUBLISH_STREAM)),
    });
    this.scheduler.observer = (call, result) => this.observe(call, result);
    this.scheduler.inspector = (call) => this.inspect(call);
    const consume = (
      role: string,
      url: string,
      spec: QueueSpec,
      batchSize: number,
      concurrency: number,
      make: (context: () => FaninContext) => (event: SQSEvent) => Promise<unknown>,
    ) => {
      const handler = this.environments(make);
      const consumer: Consumer = {
        role,
        url,
        spec,
        batchSize,
        concurrency,
        handler,
        inFlight: 0,
        polling: false,
      };
      this.consumers.push(consumer);
      this.byUrl.set(url, consumer);
    };
    const { consumers, queues } = this.topology;
    consume(
      'fanout',
      this.storage.queueUrls.ingress,
      queues.ingress,
      consumers.fanOut.batchSize,
      3,
      makeFanOutHandler,
    );
    consume('control', this.storage.queueUrls.control, queues.control, 1, 2, makeControlHandler);
    consume(
      'timer',
      this.storage.queueUrls.timer,
      queues.timer,
      consumers.timer.batchSize,
      2,
      makeTimerHandler,
    );
    const drain = this.environments((context) =>
      makeReplyDrainHandler(context, () => ({
        sqs: clients.sqs,
        replyQueueUrls: this.storage.replyQueueUrls,
        timeoutMs: this.topology.functionTimeoutSeconds * 1000,
      })),
    );
    this.topology.replyConsumers.forEach((spec, i) => {
      const url = this.storage.replyQueueUrls[i] as string;
      if ((spec.drainIntervalSeconds ?? 0) > 0) {
        this.scheduleDrain(i, spec.batchSize, drain, (spec.drainIntervalSeconds ?? 60) * 1000);
        return;
      }
      const batch = Math.min(spec.batchSize, 10);
      consume(`reply:${i}`, url, this.topology.replyPartitions[i] as QueueSpec, batch, 3, makeReplyHandler);
    });
    this.sweeper = this.environments(makeSweeperHandler);
  }

  private readonly sweeper: Environments<() => Promise<unknown>>;
  private readonly newContext: () => FaninContext;

  /**
   * Lambda's execution environments of one function: an invocation takes an idle one (its
   * context, caches and all, as a warm start) or a new one; a crashed invocation's environment
   * is gone with it, so nothing it held (a read in flight, a cache) outlives it.
   */
  private environments<H>(make: (context: () => FaninContext) => H): Environments<H> {
    const idle: H[] = [];
    return {
      take: () => {
        const handler = idle.pop();
        if (handler !== undefined) return handler;
        const ctx = this.newContext();
        return make(() => ctx);
      },
      give: (handler, how) => {
        if (how !== 'crashed') idle.push(handler);
      },
    };
  }

  /**
   * Watches the store's reply puts (without changing them): each reply a put recorded goes to the
   * ledger with the moment it took effect and the header as it stood then, for the timing
   * invariants (no member received after its deadline; a condition that held before it decides).
   */
  private observeRecordings(ctx: FaninContext): void {
    const store = ctx.store;
    const putReplies = store.putReplies.bind(store);
    store.putReplies = async (aggregateId, replies, shards) => {
      const fates = await putReplies(aggregateId, replies, shards);
      replies.forEach((reply, i) => {
        if (fates[i] !== 'recorded') return;
        this.ledger.recordings.push(this.replyEvent(aggregateId, reply.replyId, reply.failure !== undefined));
      });
      return fates;
    };
  }

  /** A reply event now, with the aggregate's header as the table holds it (read outside the run). */
  private replyEvent(aggregateId: string, replyId: string, failure: boolean) {
    const { Item } = this.models.dynamodb.handle('GetCommand', {
      TableName: this.topology.tableName,
      Key: { pk: aggregateKey(aggregateId), sk: SortKey.HEADER },
      ConsistentRead: true,
    }) as { Item?: Record<string, unknown> };
    const params = (Item?.params ?? {}) as {
      count?: number;
      timeoutSeconds?: number;
      inactivityTimeoutSeconds?: number;
    };
    const number = (name: string, value: unknown) => (typeof value === 'number' ? { [name]: value } : {});
    return {
      aggregateId,
      replyId,
      at: this.scheduler.now,
      clock: this.scheduler.clock(),
      ...(typeof Item?.deadline === 'number' ? { deadline: Item.deadline } : {}),
      exists: Item !== undefined,
      open: Item?.status === AggregateStatus.OPEN,
      ...(failure ? { failure } : {}),
      ...(typeof Item?.expected === 'number' ? { expected: Item.expected } : {}),
      ...(typeof params.count === 'number' ? { count: params.count } : {}),
      ...number('openedAt', Item?.openedAt),
      ...number('closeBy', Item?.closeBy),
      ...number('timeoutSeconds', params.timeoutSeconds),
      ...number('inactivityTimeoutSeconds', params.inactivityTimeoutSeconds),
    };
  }

  /** Receipts of replies by a reply invocation (a batch's records, or what a drain received). */
  private received(
    messages: readonly {
      MessageAttributes?: Record<string, unknown>;
      Attributes?: Record<string, string>;
      SentAt?: number;
    }[],
    skew: number,
  ): void {
    for (const m of messages) {
      const attribute = (name: string) => {
        const value = m.MessageAttributes?.[name];
        return typeof value === 'string'
          ? value
          : (value as { StringValue?: string } | undefined)?.StringValue;
      };
      const aggregateId = attribute('fanin-aggregate-id');
      const replyId = attribute('fanin-reply-id');
      // A heartbeat is no reply: its arrival says nothing of when its recipient's reply came.
      if (aggregateId === undefined || replyId === undefined || attribute(HEARTBEAT_ATTRIBUTE) !== undefined)
        continue;
      const event = this.replyEvent(aggregateId, replyId, attribute('fanin-failure') !== undefined);
      // A receive's SentTimestamp; the event source's batch comes from the store with its SentAt.
      const sent = Number(m.Attributes?.SentTimestamp ?? m.SentAt);
      this.ledger.receipts.push({
        ...event,
        clock: this.scheduler.now + skew,
        ...(Number.isFinite(sent) ? { sentAt: sent } : {}),
      });
    }
  }

  /** Runs the workload, then the world to quiescence; fills {@link ledger}. */
  public async run(): Promise<void> {
    for (const action of this.workload.actions) {
      this.scheduler.at(START + action.at, () => {
        this.send(action);
        if (this.random.chance(this.profile.duplicateSend)) {
          this.faults['duplicate-send'] += 1;
          this.send(action);
        }
      });
    }
    this.armSweeper();
    const horizon = START + HORIZON_MS;
    while (
      this.steps < MAX_STEPS &&
      this.scheduler.counts.bytes < MAX_BYTES &&
      (await this.scheduler.step(horizon, () => undefined))
    ) {
      this.steps += 1;
      if (this.random.chance(this.profile.ttl)) {
        this.faults['ttl-sweep'] += 1;
        this.models.dynamodb.expireSome(this.scheduler.now);
        this.models.s3.expireSome(this.scheduler.now);
      }
    }
    this.ledger.endedAt = this.scheduler.now;
    this.ledger.hung = this.scheduler.stillRunning();
    this.ledger.excused = this.scheduler.faulted;
    if (this.steps >= MAX_STEPS || this.scheduler.counts.bytes >= MAX_BYTES) {
      this.ledger.hung.push(
        `the run itself: cut short at ${this.steps} steps and ${Math.round(this.scheduler.counts.bytes / 1e6)} MB of answers (its budget: ${MAX_STEPS} steps, ${MAX_BYTES / 1e6} MB)`,
      );
    }
    this.ledger.leftover = this.storage.leftover();
    this.ledger.deadLetters = this.storage.deadLetters();
  }

  /** Sends one producer, responder or operator message (the world's own call, never faulted). */
  private send(action: Workload['actions'][number]): void {
    const url =
      action.queue === 'ingress'
        ? this.storage.queueUrls.ingress
        : action.queue === 'control'
          ? this.storage.queueUrls.control
          : (this.storage.replyQueueUrls[action.queue % this.storage.replyQueueUrls.length] as string);
    const messageId = this.storage.send(url, action.body, action.attributes, action.claimCheck ?? false);
    this.scheduler.trace.add(
      `t=${this.scheduler.now} send ${action.kind} ${messageId} to ${url.slice(url.lastIndexOf('/') + 1)} ${action.aggregateId?.slice(0, 60) ?? ''} ${action.replyId?.slice(0, 20) ?? ''}`,
      `send ${action.kind}`,
    );
    const definition = action.attributes['fanin-definition'] ?? definitionOf(action.body);
    this.ledger.inputs.push({
      kind: action.kind,
      messageId,
      at: this.scheduler.now,
      body: action.body,
      attributes: action.attributes,
      ...(action.aggregateId !== undefined ? { aggregateId: action.aggregateId } : {}),
      ...(action.replyId !== undefined ? { replyId: action.replyId } : {}),
      ...(action.attributes['fanin-failure'] !== undefined ? { failure: true } : {}),
      ...(definition !== undefined ? { definition } : {}),
    });
    this.wake(url, 0);
  }

  /** A message may be waiting on `url` after `delayMs`: poll its consumer (or responder) then. */
  private wake(url: string, delayMs: number): void {
    const parked = this.parkedDrains.get(url);
    if (parked) {
      this.parkedDrains.delete(url);
      parked();
    }
    const consumer = this.byUrl.get(url);
    if (consumer) {
      this.scheduler.at(this.scheduler.now + delayMs + this.random.between(0, 50), () => this.poll(consumer));
      return;
    }
    if (this.targets.has(url)) {
      this.scheduler.at(this.scheduler.now + delayMs + this.random.between(5, 800), () => this.respond(url));
    }
  }

  /** Lambda's event source: receives a batch and invokes the handler with it. */
  private poll(consumer: Consumer): void {
    if (consumer.inFlight >= consumer.concurrency) return;
    const messages = this.storage.receive(consumer.url, consumer.batchSize, consumer.spec);
    // Whatever this batch does, its messages may come back once the visibility timeout is over.
    if (messages.length === 0) return;
    this.wake(consumer.url, consumer.spec.visibilityTimeoutSeconds * 1000 + 1);
    const records = messages.map((m) => eventRecordOf(m, consumer.spec.name, 'sim'));
    consumer.inFlight += 1;
    const skew = this.profile.skewMs > 0 ? this.random.between(-this.profile.skewMs, this.profile.skewMs) : 0;
    if (skew !== 0) this.faults.skew += 1;
    if (consumer.role.startsWith('reply:')) this.received(messages, skew);
    this.scheduler.trace.add(
      `t=${this.scheduler.now} receive ${consumer.role} ${messages.map((m) => `${m.MessageId}(${m.ReceiveCount})`).join(' ')}`,
    );
    // A message's last delivery before its DLQ runs calm (see Task.calm).
    const calm = messages.some((m) => m.ReceiveCount >= consumer.spec.maxReceiveCount - 1);
    const handler = consumer.handler.take();
    this.scheduler.spawn(
      `${consumer.role}:${records.length}`,
      skew,
      () => handler({ Records: records }),
      (response, how) => {
        consumer.handler.give(handler, how);
        consumer.inFlight -= 1;
        const failed = new Set(
          (
            (response as { batchItemFailures?: { itemIdentifier: string }[] } | undefined)
              ?.batchItemFailures ?? []
          ).map((f) => f.itemIdentifier),
        );
        if (response !== undefined) {
          for (const m of messages) {
            if (failed.has(m.MessageId)) continue;
            // Never on a message's last delivery before its DLQ (calm): a delete lost there would
            // take a message that succeeded to the DLQ, which SQS's own (rare, independent)
            // redeliveries do not do.
            if (!calm && this.random.chance(this.profile.duplicateDelivery)) {
              // The delete is lost: SQS delivers the message again after its visibility timeout.
              this.faults['duplicate-delivery'] += 1;
              continue;
            }
            this.storage.remove(consumer.url, m.ReceiptHandle);
          }
        }
        this.wake(consumer.url, 0);
      },
      calm,
    );
    // Concurrency left: the event source keeps polling.
    this.wake(consumer.url, 1);
  }

  /** The paced bulk responder's queue (scenario `bulk`), when the run has one. */
  private bulkUrl: string | undefined;

  /**
   * A responder: takes what its queue holds and answers each sub-request by the policy. One of a
   * definition that looks after its responders (`responders`) may also lose an attempt (a retry
   * may then reach it), think past its own deadline, and send heartbeats while it thinks (some
   * naming a reply id that is no recipient, all with a body that looks like a reply).
   */
  private respond(url: string): void {
    if (url === this.bulkUrl) {
      this.respondPaced(url);
      return;
    }
    const messages = this.storage.receive(url, 10, undefined);
    if (messages.length === 0) return;
    const policy = this.workload.responders;
    for (const m of messages) {
      // A cancellation notice (recorded when it was sent): the responder stops, nothing to answer.
      if (m.MessageAttributes[CancellationAttribute.CANCELLED] !== undefined) {
        this.storage.remove(url, m.ReceiptHandle);
        continue;
      }
      const { attributes, aggregateId, replyId, replyTo } = this.takeSubRequest(url, m);
      if (replyTo === undefined || this.random.chance(policy.silent)) continue;
      const looked = this.lookedAfter.get(attributes['fanin-definition'] ?? '');
      if (looked !== undefined && this.random.chance(policy.lost)) continue;
      const think =
        looked !== undefined && this.random.chance(policy.slow)
          ? this.random.between(500, looked.ownSeconds * 2000)
          : 0;
      if (think > 0 && looked?.heartbeatSeconds !== undefined && this.random.chance(0.7))
        this.heartbeats(attributes, { aggregateId, replyId, replyTo }, think, looked.heartbeatSeconds);
      const failure = this.random.chance(policy.failure);
      const copies = this.random.chance(policy.duplicate) ? 2 : 1;
      const late = this.random.chance(policy.late);
      let body = JSON.stringify(replyBody(this.random, aggregateId, replyId));
      for (let c = 0; c < copies + (this.random.chance(policy.differentBody) ? 1 : 0); c += 1) {
        if (c === copies) body = JSON.stringify(replyBody(this.random, aggregateId, replyId));
        const delay = think + (late ? this.random.between(60_000, 1_200_000) : this.random.between(1, 3000));
        const sent = body;
        const replyAttributes = failure ? { ...attributes, 'fanin-failure': 'responder down' } : attributes;
        this.scheduler.at(this.scheduler.now + delay, () =>
          this.send({
            at: 0,
            queue: this.partitionOf(replyTo),
            body: sent,
            attributes: replyAttributes,
            aggregateId,
            replyId,
            kind: 'reply',
          }),
        );
      }
    }
    this.wake(url, 0);
  }

  /**
   * A responder thinking for `thinkMs` sends heartbeats to its reply queue every 30-100 % of the
   * heartbeat interval until then: each with a body like a reply's, so one taken for a reply would
   * show in a result. One in twenty names a reply id that is no recipient.
   */
  private heartbeats(
    attributes: Readonly<Record<string, string>>,
    to: { aggregateId: string; replyId: string; replyTo: string },
    thinkMs: number,
    heartbeatSeconds: number,
  ): void {
    let at = 0;
    for (let beat = 0; beat < 20; beat += 1) {
      at += this.random.between(heartbeatSeconds * 300, heartbeatSeconds * 1000);
      if (at >= thinkMs) return;
      const replyId = this.random.chance(0.05) ? '97' : to.replyId;
      const body = JSON.stringify(replyBody(this.random, to.aggregateId, replyId));
      const beatAttributes = { ...attributes, 'fanin-reply-id': replyId, [HEARTBEAT_ATTRIBUTE]: '1' };
      this.scheduler.at(this.scheduler.now + at, () =>
        this.send({
          at: 0,
          queue: this.partitionOf(to.replyTo),
          body,
          attributes: beatAttributes,
          aggregateId: to.aggregateId,
          replyId,
          kind: 'heartbeat',
        }),
      );
    }
  }

  /** A responder takes a sub-request off its queue: its fanin attributes, recorded in the ledger. */
  private takeSubRequest(
    url: string,
    m: { ReceiptHandle: string; MessageAttributes: Record<string, string> },
  ) {
    this.storage.remove(url, m.ReceiptHandle);
    const attributes: Record<string, string> = {};
    for (const [name, value] of Object.entries(m.MessageAttributes))
      if (name.startsWith('fanin-')) attributes[name] = value;
    const aggregateId = attributes['fanin-aggregate-id'] ?? '';
    const replyId = attributes['fanin-reply-id'] ?? '';
    this.ledger.subRequests.push({
      aggregateId,
      replyId,
      definition: attributes['fanin-definition'] ?? '',
      at: this.scheduler.now,
    });
    return { attributes, aggregateId, replyId, replyTo: attributes['fanin-reply-to'] };
  }

  /**
   * The bulk scenario's responder: answers each sub-request once, in index order (20 ms apart),
   * never silent nor late, a failure exactly where the scenario says.
   */
  private respondPaced(url: string): void {
    const messages = this.storage.receive(url, 10, undefined);
    if (messages.length === 0) return;
    for (const m of messages) {
      // A cancellation notice (recorded when it was sent): the responder stops, nothing to answer.
      if (m.MessageAttributes[CancellationAttribute.CANCELLED] !== undefined) {
        this.storage.remove(url, m.ReceiptHandle);
        continue;
      }
      const { attributes, aggregateId, replyId, replyTo } = this.takeSubRequest(url, m);
      if (replyTo === undefined) continue;
      const key = `${aggregateId}\u0000${replyId}`;
      const failure = this.workload.scenarios.bulkFailures.has(key);
      const body = JSON.stringify(replyBody(this.random, aggregateId, replyId));
      const delay =
        1000 +
        Number(replyId) * 20 +
        this.random.between(0, 30) +
        (this.workload.scenarios.bulkDelays.get(key) ?? 0);
      this.scheduler.at(this.scheduler.now + delay, () =>
        this.send({
          at: 0,
          queue: this.partitionOf(replyTo),
          body,
          attributes: failure ? { ...attributes, 'fanin-failure': 'responder down' } : attributes,
          aggregateId,
          replyId,
          kind: 'reply',
        }),
      );
    }
    this.wake(url, 0);
  }

  private partitionOf(url: string): number {
    const index = this.storage.replyQueueUrls.indexOf(url);
    return Math.max(index, 0);
  }

  /** A drained partition: its schedule invokes the drain every interval while it holds messages. */
  private scheduleDrain(
    partition: number,
    batchSize: number,
    drain: Environments<(event: { drain: { partition: number; batchSize: number } }) => Promise<unknown>>,
    intervalMs: number,
  ): void {
    const url = this.storage.replyQueueUrls[partition] as string;
    const grid = (t: number) => START + Math.ceil((t - START) / intervalMs) * intervalMs;
    let drains = 0;
    const tick = () => {
      // Messages received by a drain that crashed count too: they come back after their timeout.
      if (this.storage.depth(url) === 0) {
        this.parkedDrains.set(url, () => this.scheduler.at(grid(this.scheduler.now + 1), tick));
        return;
      }
      if (this.scheduler.busy(`drain:${partition}`) === 0) {
        // Every third drain runs calm, so faults alone never take a reply to the DLQ.
        drains += 1;
        const calm = drains % 3 === 0;
        const handler = drain.take();
        this.scheduler.spawn(
          `drain:${partition}`,
          0,
          () => handler({ drain: { partition, batchSize } }),
          (_value, how) => drain.give(handler, how),
          calm,
        );
      }
      this.scheduler.at(this.scheduler.now + intervalMs, tick);
    };
    this.parkedDrains.set(url, () => this.scheduler.at(grid(this.scheduler.now + 1), tick));
  }

  /** Drain schedules with nothing to drain, re-armed by the next message sent to their partition. */
  private readonly parkedDrains = new Map<string, () => void>();

  /**
   * The sweeper's schedule: every minute while some aggregate is due, skipping the minutes in
   * which none is (nothing but time passes then). A due item written earlier than the sweep
   * already planned brings that sweep forward.
   */
  private armSweeper(): void {
    const next = this.storage.nextDue();
    if (next === undefined) return;
    const interval = this.topology.sweepIntervalSeconds * 1000;
    const grid = (t: number) => START + Math.ceil((t - START) / interval) * interval;
    const at = Math.max(grid(this.scheduler.now + 1), grid(next.dueAt));
    if (this.sweepAt !== undefined && this.sweepAt <= at) return;
    this.sweepAt = at;
    this.scheduler.at(at, () => {
      if (this.sweepAt !== at) return;
      this.sweepAt = undefined;
      const failing = this.failingAggregate();
      if (failing !== undefined) {
        this.ledger.stuck.add(failing);
        return;
      }
      const overdue = this.storage.nextDue();
      if (overdue && overdue.dueAt < this.scheduler.now - 10 * interval) {
        this.overdueSweeps += 1;
        if (this.overdueSweeps >= STUCK_SWEEPS) {
          this.ledger.stuck.add(overdue.aggregateId);
          return;
        }
      } else {
        this.overdueSweeps = 0;
      }
      const handler = this.sweeper.take();
      this.scheduler.spawn(
        'sweeper',
        0,
        () => handler(),
        (_value, how) => {
          this.sweeper.give(handler, how);
          this.armSweeper();
        },
      );
    });
  }

  /** When the next sweep is planned, if one is. */
  private sweepAt: number | undefined;

  /** An aggregate not closed whose sweeps failed {@link STUCK_FAILURES} times (read outside the run). */
  private failingAggregate(): string | undefined {
    for (const item of this.models.dynamodb.items(this.topology.tableName)) {
      if (item.sk !== SortKey.HEADER || item.status === AggregateStatus.CLOSED) continue;
      if (typeof item.dueFailures === 'number' && item.dueFailures >= STUCK_FAILURES)
        return String(item.aggregateId ?? String(item.pk).slice(2));
    }
    return undefined;
  }

  /** Which output a call publishes to (for a channel that fails on its own). */
  private channelOf(call: PendingCall): string | undefined {
    if (call.service === 'eventbridge') return 'events';
    const url = (call.input as { QueueUrl?: string }).QueueUrl;
    return url === undefined ? undefined : this.outputRoles.get(url);
  }

  /**
   * A put that took effect stored these replies (its own item, or a pack's members), whether or
   * not its caller saw the answer (a crash or a timeout after the write): the ledger's `stored`.
   */
  private stored(item: unknown): void {
    const it = item as Record<string, unknown> | undefined;
    const sk = typeof it?.sk === 'string' ? it.sk : '';
    const replies = sk.startsWith(SortKey.REPLY)
      ? it?.late === true
        ? []
        : [{ replyId: String(it?.replyId), failure: it?.failure !== undefined }]
      : sk.startsWith(SortKey.PACK)
        ? expandPack(it ?? {}).map((r) => ({ replyId: r.replyId, failure: r.failure !== undefined }))
        : [];
    if (replies.length === 0) return;
    const { Item: header } = this.models.dynamodb.handle('GetCommand', {
      TableName: this.topology.tableName,
      Key: { pk: String(it?.pk).split(KEY_SEPARATOR)[0], sk: SortKey.HEADER },
      ConsistentRead: true,
    }) as { Item?: { aggregateId?: unknown } };
    if (typeof header?.aggregateId !== 'string') return;
    for (const reply of replies)
      this.ledger.stored.push(this.replyEvent(header.aggregateId, reply.replyId, reply.failure));
  }

  /** A sub-request or a cancellation notice sent to a responder queue, in the ledger. */
  private sentToResponder(url: string, entry: Record<string, unknown>, call: PendingCall): void {
    const attributes = (entry.MessageAttributes ?? {}) as Record<string, { StringValue?: string }>;
    const send = {
      aggregateId: attributes['fanin-aggregate-id']?.StringValue ?? '',
      replyId: attributes['fanin-reply-id']?.StringValue ?? '',
      queue: url,
      at: this.scheduler.now,
      afterPublications: this.ledger.publications.length,
      taskId: call.task.id,
      task: call.task.name,
      taskStartedAt: call.task.startedAt,
      attempt: Number(attributes[ATTEMPT_ATTRIBUTE]?.StringValue ?? 1),
      body: this.storage.resolve(entry.MessageBody as string, attributes),
      ...(attributes['fanin-reply-to']?.StringValue !== undefined
        ? { replyTo: attributes['fanin-reply-to'].StringValue }
        : {}),
    };
    if (attributes[CancellationAttribute.CANCELLED] !== undefined) this.ledger.cancellations.push(send);
    else this.ledger.asked.push(send);
  }

  /** The reply put about to be applied found an item under its key (read outside the run). */
  private replacing: PendingCall | undefined;

  /** Before a call is applied: a put of a reply or a pack notes whether its key holds an item already. */
  private inspect(call: PendingCall): void {
    this.replacing = undefined;
    if (call.service !== 'dynamodb' || call.command !== 'PutCommand') return;
    const item = (call.input as { Item?: { pk?: unknown; sk?: unknown } }).Item;
    const sk = typeof item?.sk === 'string' ? item.sk : '';
    if (!sk.startsWith(SortKey.REPLY) && !sk.startsWith(SortKey.PACK)) return;
    const { Item } = this.models.dynamodb.handle('GetCommand', {
      TableName: this.topology.tableName,
      Key: { pk: item?.pk, sk },
      ConsistentRead: true,
    }) as { Item?: Record<string, unknown> };
    if (Item !== undefined) this.replacing = call;
  }

  /** Records every call that took effect: outputs, sends that wake a consumer, writes that arm the sweeper. */
  private observe(call: PendingCall, result: unknown): void {
    const task = call.task.name;
    const input = call.input as Record<string, unknown>;
    if (call.service === 'dynamodb' && call.command === 'PutCommand') this.stored(input.Item);
    if (this.replacing === call) {
      // A recorded reply (or pack) is written once: a put that replaced one took effect over it.
      const item = input.Item as { pk: string; sk: string; aggregateId?: unknown };
      this.ledger.rewrites.push({
        aggregateId: typeof item.aggregateId === 'string' ? item.aggregateId : String(item.pk).slice(2),
        key: `${item.pk} ${item.sk}`,
        at: this.scheduler.now,
      });
    }
    if (
      call.service === 'sqs' &&
      (call.command === 'SendMessageCommand' || call.command === 'SendMessageBatchCommand')
    ) {
      const url = input.QueueUrl as string;
      const entries =
        call.command === 'SendMessageCommand'
          ? [input]
          : ((input.Entries as Record<string, unknown>[] | undefined) ?? []);
      for (const entry of entries) {
        const role = this.outputRoles.get(url);
        if (role !== undefined) {
          const text = this.storage.resolve(
            entry.MessageBody as string,
            entry.MessageAttributes as Record<string, { StringValue?: string }>,
          );
          this.ledger.publications.push({
            channel: role,
            text,
            at: this.scheduler.now,
            task,
            taskId: call.task.id,
          });
        }
        if (this.targets.has(url)) this.sentToResponder(url, entry, call);
        this.wake(url, Number(entry.DelaySeconds ?? 0) * 1000);
      }
    }
    if (
      call.service === 'sqs' &&
      call.command === 'ReceiveMessageCommand' &&
      this.storage.replyQueueUrls.includes(input.QueueUrl as string)
    ) {
      const messages = (
        result as {
          Messages?: { MessageAttributes?: Record<string, unknown>; Attributes?: Record<string, string> }[];
        }
      ).Messages;
      this.received(messages ?? [], call.task.skew);
      // A drain that received a message's last delivery before its DLQ runs calm from there on, as
      // an event source's batch holding one does (Task.calm): every third drain running calm does
      // not suffice, since a message a calm drain did not take can use up its receives on others.
      const partition = this.storage.replyQueueUrls.indexOf(input.QueueUrl as string);
      const max = this.topology.replyPartitions[partition]?.maxReceiveCount ?? Number.POSITIVE_INFINITY;
      if ((messages ?? []).some((m) => Number(m.Attributes?.ApproximateReceiveCount ?? 0) >= max))
        call.task.calm = true;
    }
    if (call.service === 'eventbridge' && call.command === 'PutEventsCommand') {
      const entries = (input.Entries as { Detail?: string }[] | undefined) ?? [];
      const answers = (result as { Entries?: { ErrorCode?: string }[] } | undefined)?.Entries ?? [];
      entries.forEach((entry, i) => {
        if (answers[i]?.ErrorCode) return;
        this.ledger.publications.push({
          channel: 'events',
          text: entry.Detail ?? '',
          at: this.scheduler.now,
          task,
          taskId: call.task.id,
        });
      });
    }
    // Only a write that sets a deadline can bring the next sweep forward.
    if (call.service === 'dynamodb' && JSON.stringify(input).includes('dueAt')) this.armSweeper();
  }
}

/** The definition a request body names, if it parses. */
function definitionOf(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { definition?: unknown };
    return typeof parsed.definition === 'string' ? parsed.definition : undefined;
  } catch {
    return undefined;
  }
}

export { QueueRole };
