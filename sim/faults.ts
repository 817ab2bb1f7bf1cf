import type { Random } from './random.ts';
import type { CallFate, FaultPlan, PendingCall } from './scheduler.ts';

/**
 * The faults of one run, all drawn from its seed: how often an invocation crashes between two AWS
 * calls, how often a call fails before taking effect or times out after it took effect, pauses
 * past the completion lease or the visibility timeout, clock skew, duplicated and reordered
 * deliveries, TTL sweeps, an output channel down for a while, and "buggify" switches that make
 * rare paths common (FoundationDB's term).
 */

/** Every kind of fault, as the report counts them. */
export const FAULT_KINDS = [
  'crash',
  'fail-before',
  'fail-after',
  'pause-lease',
  'pause-visibility',
  'pause-publish',
  'skew',
  'duplicate-delivery',
  'duplicate-send',
  'ttl-sweep',
  'channel-down',
  'slow-consumer',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The rare paths a run may make common. */
export interface Buggify {
  /** Invocations crash far more often right after a write took effect. */
  readonly crashAfterWrites: boolean;
  /** Every conditional write may time out after it took effect. */
  readonly ambiguousWrites: boolean;
  /** The bus refuses entries now and then (FailedEntryCount), not only whole calls. */
  readonly busDown: boolean;
  /** Messages are delivered twice by the event source (at-least-once made visible). */
  readonly duplicateDeliveries: boolean;
  /** Pollers take small batches, so an aggregate's replies spread over many invocations. */
  readonly smallBatches: boolean;
  /** TTL runs at every step instead of now and then. */
  readonly eagerTtl: boolean;
}

/** The rates of one run. */
export interface FaultProfile {
  readonly crash: number;
  readonly failBefore: number;
  readonly failAfter: number;
  readonly pause: number;
  readonly skewMs: number;
  readonly duplicateDelivery: number;
  readonly duplicateSend: number;
  readonly ttl: number;
  readonly buggify: Buggify;
  /** An output channel ('events' or an output role) failing on its own over [from, to). */
  readonly channelDown?: { readonly channel: string; readonly from: number; readonly to: number };
}

const THROTTLES: Record<string, readonly string[]> = {
  dynamodb: ['ProvisionedThroughputExceededException', 'InternalServerError', 'ThrottlingException'],
  sqs: ['ServiceUnavailable', 'InternalError', 'ThrottlingException'],
  s3: ['SlowDown', 'InternalError'],
  eventbridge: ['ThrottlingException', 'InternalException'],
};

const WRITES = new Set([
  'PutCommand',
  'UpdateCommand',
  'DeleteCommand',
  'TransactWriteCommand',
  'BatchWriteCommand',
  'SendMessageCommand',
  'SendMessageBatchCommand',
  'PutEventsCommand',
  'PutObjectCommand',
  'DeleteMessageCommand',
  'DeleteMessageBatchCommand',
]);

/** Draws a run's fault profile: most runs calm, some stormy, a few with nothing at all. */
export function drawProfile(random: Random, start: number): FaultProfile {
  const level = random.pick([0, 1, 1, 2, 2, 3]);
  const rate = (base: number) => (level === 0 ? 0 : base * level * random.next() * 2);
  const buggify: Buggify = {
    crashAfterWrites: random.chance(0.15),
    ambiguousWrites: random.chance(0.15),
    busDown: random.chance(0.1),
    duplicateDeliveries: random.chance(0.2),
    smallBatches: random.chance(0.25),
    eagerTtl: random.chance(0.15),
  };
  const channelDown = random.chance(0.15)
    ? {
        channel: random.pick(['events', 'completed', 'timed-out', 'late', 'error']),
        from: start + random.between(0, 20_000),
        to: start + random.between(20_000, 400_000),
      }
    : undefined;
  return {
    crash: rate(0.004),
    failBefore: rate(0.01),
    failAfter: rate(0.004),
    pause: rate(0.002),
    skewMs: random.pick([0, 0, 500, 2000, 5000]),
    duplicateDelivery: buggify.duplicateDeliveries ? 0.2 : rate(0.01),
    duplicateSend: rate(0.03),
    ttl: buggify.eagerTtl ? 1 : 0.05,
    buggify,
    ...(channelDown ? { channelDown } : {}),
  };
}

/**
 * The publishers' pauses of one run, drawn from a stream of their own (`random` here is not the
 * run's), so that a run without them is exactly as it was before they existed: in a quarter of
 * the runs, every call that publishes an output (a send to an output queue, a put on the bus) may
 * stall a while shorter than the completion lease. The completer then holds its aggregate,
 * sealed and not yet closed, long enough for a redelivered reply, a duplicate or the sweeper to
 * come upon it within its lease: they must leave it to its owner (the one copy of its result).
 */
export interface PublishPauses {
  readonly random: Random;
  /** The chance of each publishing call to stall (0: the run has none). */
  readonly rate: number;
}

/** Draws a run's publishers' pauses from their own stream. */
export function drawPublishPauses(random: Random): PublishPauses {
  return { random, rate: random.chance(0.25) ? 0.5 : 0 };
}

/** Counts of each fault injected, for the report. */
export type FaultCounts = Record<FaultKind, number>;

/** A fresh set of counters. */
export function noFaults(): FaultCounts {
  return Object.fromEntries(FAULT_KINDS.map((kind) => [kind, 0])) as FaultCounts;
}

/**
 * The fault plan of a run: what happens to each call the scheduler picks. `lease` and
 * `visibility` are how long a pause must be to outlive the completion lease and the visibility
 * timeout; `outputChannel` tells which output a call publishes to, if any.
 */
export function faultPlan(options: {
  readonly random: Random;
  readonly profile: FaultProfile;
  readonly counts: FaultCounts;
  readonly now: () => number;
  readonly leaseMs: number;
  readonly visibilityMs: number;
  readonly outputChannel: (call: PendingCall) => string | undefined;
  readonly publishPauses?: PublishPauses;
}): FaultPlan {
  const { random, profile, counts } = options;
  const { buggify } = profile;
  const publishing = options.publishPauses;
  // Shorter than the lease by more than the clocks' skew, so the owner never loses it here.
  const withinLeaseMs = Math.max(1000, options.leaseMs / 2);
  return (call): CallFate => {
    // Drawn from its own stream first: a call it does not pause draws the run's faults as before.
    if (
      publishing !== undefined &&
      publishing.rate > 0 &&
      options.outputChannel(call) !== undefined &&
      publishing.random.chance(publishing.rate)
    ) {
      counts['pause-publish'] += 1;
      return { kind: 'pause', ms: publishing.random.between(500, withinLeaseMs), withinLease: true };
    }
    const write = WRITES.has(call.command);
    const down = profile.channelDown;
    if (down && options.now() >= down.from && options.now() < down.to) {
      const channel = options.outputChannel(call);
      if (channel === down.channel) {
        counts['channel-down'] += 1;
        return { kind: 'fail-before', error: THROTTLES[call.service]?.[0] ?? 'InternalError' };
      }
    }
    if (buggify.busDown && call.service === 'eventbridge' && random.chance(0.3)) {
      counts['channel-down'] += 1;
      return { kind: 'fail-before', error: 'InternalException' };
    }
    if (random.chance(profile.crash + (buggify.crashAfterWrites && write ? 0.05 : 0))) {
      counts.crash += 1;
      return { kind: 'crash', afterEffect: write && random.chance(0.5) };
    }
    if (random.chance(profile.pause)) {
      const pastVisibility = random.chance(0.4);
      counts[pastVisibility ? 'pause-visibility' : 'pause-lease'] += 1;
      const base = pastVisibility ? options.visibilityMs : options.leaseMs;
      return { kind: 'pause', ms: base + random.between(1000, 30_000) };
    }
    if (random.chance(profile.failBefore)) {
      counts['fail-before'] += 1;
      return { kind: 'fail-before', error: random.pick(THROTTLES[call.service] ?? ['InternalError']) };
    }
    if (write && random.chance(profile.failAfter + (buggify.ambiguousWrites ? 0.05 : 0))) {
      counts['fail-after'] += 1;
      return { kind: 'fail-after', error: 'TimeoutError' };
    }
    return { kind: 'apply' };
  };
}
