import { randomBytes } from 'node:crypto';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { makeFanOutHandler, makeSweeperHandler, makeTimerHandler } from '../../functions/handlers.ts';
import { createContext } from '../../shared/app.ts';
import { type Connection, createDocumentClient } from '../../shared/aws/clients.ts';
import type { DefinitionInput } from '../../shared/engine/definition.ts';
import { eventRecordOf } from '../../sim/storage.ts';
import { durableFunctionsPerMillion, stepFunctionsExpressPerMillion } from '../cost/anchors.ts';
import type { Prices } from '../cost/prices.ts';
import { billPerMillion, usageOf } from '../cost/usage.ts';
import { type Counters, diff, total } from '../measure/counters.ts';
import { Meter } from '../measure/meter.ts';
import { prose } from '../report/format.ts';
import { meteredFanin } from '../rig/rig.ts';
import { round } from './figures.ts';

/** The benchmark's open-time dimension: what an aggregate costs that stays open until its deadline. */

/** Deadlines measured (seconds): 1 minute, 1 hour, 1 day, 7 days; 30 days in the full run. */
export const OPEN_SECONDS_QUICK = [60, 3_600, 86_400, 604_800] as const;
export const OPEN_SECONDS_FULL = [...OPEN_SECONDS_QUICK, 2_592_000] as const;

/** Aggregates per deadline, opened together by one fan-out invocation (a batch of ten requests). */
const AGGREGATES = 10;
const MINUTE = 60_000;

/** What one deadline's aggregates cost, per aggregate (`timers.by_open_seconds`, `timers.by_kind`). */
export type OpenTimeFigures = ReturnType<typeof openTimeFigures>;

/** Runs the dimension on its own topology; returns the figures by deadline. */
export async function runOpenTime(
  connection: Connection,
  prices: Prices,
  openSeconds: readonly number[],
): Promise<OpenTimeFigures[]> {
  const figures: OpenTimeFigures[] = [];
  for (const seconds of openSeconds)
    figures.push(await measureOne(connection, prices, deadlineCase(seconds)));
  return figures;
}

/** What one measurement opens and when its things fall due. */
interface TimerCase {
  readonly definition: DefinitionInput;
  /** How long the aggregates stay open (seconds). */
  readonly openSeconds: number;
  /** When each timer is due, from the aggregates' opening (ms). */
  readonly dueOffsetsMs: readonly number[];
  /** The request of aggregate `id` (default: a fan-out `none` expecting two replies). */
  readonly request?: (id: string) => Record<string, unknown>;
}

/** A case of one definition (fan-out `none`, strategy `all`, then `fields`) open for `openSeconds`. */
function timerCase(
  name: string,
  fields: Partial<DefinitionInput>,
  openSeconds: number,
  dueOffsetsMs: readonly number[],
): TimerCase {
  const definition = { name, fanOut: { type: 'none' }, completion: { strategy: 'all' }, ...fields };
  return { definition: definition as DefinitionInput, openSeconds, dueOffsetsMs };
}

function deadlineCase(seconds: number): TimerCase {
  // Its allowed life beyond the deadline, so the deadline decides.
  const fields = { timeoutSeconds: seconds, maxOpenSeconds: Math.max(3_600, seconds + 86_400) };
  return timerCase(`bench-open-${seconds}`, fields, seconds, [seconds * 1000]);
}

const DAY = 86_400;

/** The other long timers whose interval can reach beyond SQS's 15-minute delay. */
export const TIMER_KINDS = {
  snapshot_daily_7_days: (): TimerCase => {
    const open = 7 * DAY + 3_600;
    // Days 1 to 7, the deadline, and day 8 (armed before the close, it finds the aggregate closed).
    const days = Array.from({ length: 7 }, (_, i) => (i + 1) * DAY * 1000);
    const due = [...days, open * 1000, 8 * DAY * 1000];
    const fields = { timeoutSeconds: open, snapshotIntervalSeconds: DAY };
    return timerCase('bench-kind-snapshot', fields, open, due);
  },
  allowed_life_7_days: (): TimerCase =>
    timerCase('bench-kind-life', { maxOpenSeconds: 7 * DAY }, 7 * DAY, [7 * DAY * 1000]),
} as const;

/** Sub-requests per aggregate in the responders' cases: a splitter of ten items to one queue. */
export const RESPONDER_RECIPIENTS = 10;

/**
 * Looking after the responders (docs/definitions.md, "Looking after the responders", "Retries"):
 * the same splitter of ten recipients who never reply, each with a 30 s deadline of its own, with
 * nothing more, with one round of retries at 10 s, and with cancellation notices when it ends.
 */
function respondersCase(variant: 'base' | 'retry' | 'cancellation'): TimerCase {
  const name = `bench-responders-${variant}`;
  const target = `benchrcp${randomBytes(3).toString('hex')}`;
  const fields = {
    fanOut: { type: 'splitter' as const, itemsPath: '$.items', target },
    timeoutSeconds: 60,
    responders: {
      timeoutSeconds: 30,
      ...(variant === 'retry' ? { retry: { attempts: 1, intervalSeconds: 10 } } : {}),
    },
    ...(variant === 'cancellation' ? { cancelOutstanding: true } : {}),
  };
  return {
    ...timerCase(name, fields, 30, variant === 'retry' ? [10_000, 30_000] : [30_000]),
    request: (id) => ({
      definition: name,
      aggregateId: id,
      items: Array.from({ length: RESPONDER_RECIPIENTS }, (_, i) => ({ item: i })),
    }),
  };
}

/** Runs the responders' three cases on their own topologies. */
export async function runResponderCosts(connection: Connection, prices: Prices) {
  const base = await measureOne(connection, prices, respondersCase('base'));
  const retry = await measureOne(connection, prices, respondersCase('retry'));
  const cancellation = await measureOne(connection, prices, respondersCase('cancellation'));
  return responderCosts(base, retry, cancellation);
}

/** What `with` adds over `base`, per recipient (both per aggregate of {@link RESPONDER_RECIPIENTS}). */
export function responderCosts(base: OpenTimeFigures, retry: OpenTimeFigures, cancellation: OpenTimeFigures) {
  const over = (added: OpenTimeFigures) => {
    const per = (a: number, b: number) => round((a - b) / RESPONDER_RECIPIENTS, 3);
    return {
      usd_per_million: per(added.usd_per_million_aggregates, base.usd_per_million_aggregates),
      sqs_calls: per(added.sqs_calls, base.sqs_calls),
      invocations: per(added.invocations, base.invocations),
      timer_fires: per(added.timer_fires, base.timer_fires),
      read_units: per(added.read_units, base.read_units),
      write_units: per(added.write_units, base.write_units),
    };
  };
  return {
    recipients_per_aggregate: RESPONDER_RECIPIENTS,
    base,
    retry,
    cancellation,
    per_recipient: { retry: over(retry), cancellation: over(cancellation) },
  };
}

/** How the responders' cases were measured. */
export const RESPONDER_ASSUMPTIONS = prose`Ten aggregates per case, each a splitter of ten recipients on one
    queue who never reply, each recipient with a 30 s deadline of its own (the aggregate's is 60 s), so every
    case ends at 30 s, timed-out with every recipient settled and none replied (responders-settled); on a
    virtual clock, the handlers and the emulators real. retry adds one round at 10 s (ten sub-requests sent
    again in one SendMessageBatch, the round's timer, reads of the aggregate and its stored request, the
    round's record, and the request kept at open); cancellation adds the notices to the ten recipients when
    the aggregate ends. Per recipient = (case − base) / 10: the best case of one queue
    for all ten; with a queue each, a retry or a notice costs one SendMessageBatch of its own.`;

/** Runs {@link TIMER_KINDS} on their own topologies; returns the figures by kind. */
export async function runTimerKinds(
  connection: Connection,
  prices: Prices,
): Promise<Record<string, OpenTimeFigures>> {
  const figures: Record<string, OpenTimeFigures> = {};
  for (const [kind, make] of Object.entries(TIMER_KINDS))
    figures[kind] = await measureOne(connection, prices, make());
  return figures;
}

/** What one measurement runs on. */
type OpenTimeRig = Awaited<ReturnType<typeof openTimeRig>>;

/** One measurement's topology on the emulators, its metered handlers and its virtual clock. */
async function openTimeRig(connection: Connection, definition: DefinitionInput) {
  const meter = new Meter();
  const prefix = `benchot${randomBytes(3).toString('hex')}`;
  // A splitter's target: the responders' queue (theirs, not the deployment's).
  const target = definition.fanOut?.type === 'splitter' ? definition.fanOut.target : undefined;
  const fanin = await meteredFanin(connection, meter, { prefix, definitions: [definition] }, target);
  const clock = { now: Date.UTC(2027, 0, 4, 0, 0, 0) };
  /** Timer messages sent and not yet taken, by when they become visible. */
  const pending: { body: string; visibleAt: number; id: number }[] = [];
  const sent = { count: 0 };
  keepDelays(
    fanin.sqs,
    fanin.provisioned.queueUrls.timer,
    () => clock.now,
    (body, visibleAt) => {
      sent.count += 1;
      pending.push({ body, visibleAt, id: sent.count });
    },
  );
  const ctx = createContext(
    fanin.config,
    { sqs: fanin.sqs, dynamo: fanin.dynamo },
    { clock: () => clock.now },
  );
  const { sqs, dynamo } = fanin.setup;
  const look = createContext(fanin.config, { sqs, dynamo: createDocumentClient(dynamo) }).store;
  const sweep = makeSweeperHandler(() => ctx);
  return {
    topology: fanin.topology,
    meter,
    clock,
    pending,
    sent,
    fanOut: meter.wrapHandler(
      'fan-out',
      makeFanOutHandler(() => ctx),
    ),
    timer: meter.wrapHandler(
      'timer',
      makeTimerHandler(() => ctx),
    ),
    sweeper: meter.wrapHandler('sweeper', (_: { Records?: readonly unknown[] }) => sweep()),
    /** The event source's receive and delete of `messages` from `queue`, counted as the pollers make them. */
    esm: (queue: string, messages: number) => {
      for (const op of ['ReceiveMessage', 'DeleteMessageBatch']) {
        meter.add(`sqs.calls|esm|${op}|${queue}`);
        meter.add(`sqs.billed|esm|std|${op}|${queue}`);
      }
      meter.add('sqs.received|esm|std', messages);
    },
    /** The bench's own look at the aggregates, on unmetered clients. */
    look,
    stop: () => fanin.teardown().catch(() => undefined),
  };
}

/** The sweeps that can act on the aggregates opened at `openedAt`: the first after the open. */
function sweepTimes(openedAt: number, dueOffsetsMs: readonly number[]): number[] {
  const horizon = 900_000;
  const margin = 60_000;
  return [
    openedAt + MINUTE,
    ...dueOffsetsMs.flatMap((offset) => [
      openedAt + MINUTE * Math.ceil((offset - horizon + margin) / MINUTE),
      openedAt + MINUTE * (Math.floor(offset / MINUTE) + 1),
    ]),
  ]
    .filter((t, i, all) => t > openedAt && all.indexOf(t) === i)
    .sort((a, b) => a - b);
}

/** Moves the clock to whatever is due next, a timer message becoming visible or a sweep, and runs it. */
async function runUntilClosed(
  rig: OpenTimeRig,
  ids: readonly string[],
  sweeps: number[],
): Promise<{ sweepsRun: number; closedAt: Map<string, number> }> {
  const { clock, pending } = rig;
  let sweepsRun = 0;
  const closedAt = new Map<string, number>();
  for (let steps = 0; steps < 100_000; steps += 1) {
    pending.sort((a, b) => a.visibleAt - b.visibleAt || a.id - b.id);
    const nextTimer = pending[0]?.visibleAt;
    const nextSweep = sweeps[0];
    if (nextTimer === undefined && nextSweep === undefined) break;
    if (nextTimer !== undefined && (nextSweep === undefined || nextTimer <= nextSweep)) {
      clock.now = Math.max(clock.now, nextTimer);
      // Messages visible by the same second come in one receive, up to the batch size.
      const batch = pending
        .filter((p) => p.visibleAt <= clock.now + 999)
        .slice(0, rig.topology.consumers.timer.batchSize);
      for (const p of batch) pending.splice(pending.indexOf(p), 1);
      await rig.timer({ Records: batch.map((p) => record(`timer-${p.id}`, JSON.parse(p.body), clock.now)) });
      rig.esm('timer', batch.length);
    } else {
      clock.now = Math.max(clock.now, nextSweep as number);
      sweeps.shift();
      await rig.sweeper({});
      sweepsRun += 1;
    }
    for (const id of ids) {
      if (closedAt.has(id)) continue;
      const header = await rig.look.getHeader(id);
      if (header?.status === 'closed') closedAt.set(id, clock.now);
    }
    if (closedAt.size === ids.length && sweeps.length === 0 && pending.length === 0) break;
  }
  return { sweepsRun, closedAt };
}

async function measureOne(
  connection: Connection,
  prices: Prices,
  timerCase: TimerCase,
): Promise<OpenTimeFigures> {
  const { definition, openSeconds: seconds } = timerCase;
  const rig = await openTimeRig(connection, definition);
  const { meter, clock } = rig;
  try {
    // An idle sweep, as every minute makes one: what each sweep run below is counted less.
    clock.now -= 2 * MINUTE;
    await rig.sweeper({});
    clock.now += MINUTE;
    const idleBefore = meter.snapshot();
    await rig.sweeper({});
    const idle = diff(meter.snapshot(), idleBefore);
    clock.now += MINUTE;

    const start = meter.snapshot();
    rig.sent.count = 0;
    const openedAt = clock.now;
    const ids = Array.from({ length: AGGREGATES }, (_, i) => `open-${seconds}-${i}`);
    const request =
      timerCase.request ?? ((id: string) => ({ definition: definition.name, aggregateId: id, expected: 2 }));
    await rig.fanOut({ Records: ids.map((id, i) => record(`req-${i}`, request(id), clock.now)) });
    rig.esm('ingress', ids.length);
    const run = await runUntilClosed(rig, ids, sweepTimes(openedAt, timerCase.dueOffsetsMs));
    const measured = subtract(diff(meter.snapshot(), start), idle, run.sweepsRun);
    const outcomes: Record<string, number> = {};
    for (const id of ids) {
      const header = await rig.look.getHeader(id);
      const outcome = String(header?.outcome ?? header?.status ?? 'missing');
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    const due = openedAt + seconds * 1000;
    const late = Math.max(0, ...[...run.closedAt.values()].map((at) => at - due));
    return openTimeFigures(measured, { seconds, sent: rig.sent.count, outcomes, late, prices });
  } finally {
    await rig.stop();
  }
}

/** One measurement's figures per aggregate, from what its counters hold. */
function openTimeFigures(
  measured: Counters,
  run: { seconds: number; sent: number; outcomes: Record<string, number>; late: number; prices: Prices },
) {
  const usage = usageOf(measured, 'fanin', AGGREGATES, run.prices);
  const perAggregate = (n: number) => round(n / AGGREGATES, 3);
  const fanin = (who: string, d: string) =>
    (who === 'esm' || who.startsWith('fanin')) && !d.includes('(empty)');
  return {
    open_seconds: run.seconds,
    aggregates: AGGREGATES,
    /** Timer messages the timer handler took (re-arms included). */
    timer_fires: perAggregate(total(measured, 'lambda.records', (who) => who === 'timer')),
    /** Timer messages sent (by the fan-out, the timer handler and the sweep). */
    timer_sends: perAggregate(run.sent),
    sqs_calls: perAggregate(total(measured, 'sqs.calls', fanin)),
    invocations: round(usage.invocations, 3),
    read_units: round(usage.readUnits, 3),
    write_units: round(usage.writeUnits, 3),
    /** fanin's side (the producer's request send is not counted). */
    usd_per_million_aggregates: round(billPerMillion(usage, run.prices).total, 2),
    outcomes: run.outcomes,
    /** Virtual ms between each deadline and the expiry acting on it: max over the aggregates. */
    fired_late_ms_max: run.late,
  };
}

/** Keeps the delay of every timer message sent to `timerUrl` on `sqs`. */
function keepDelays(
  sqs: SQSClient,
  timerUrl: string,
  clock: () => number,
  keep: (body: string, visibleAt: number) => void,
): void {
  sqs.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (input.QueueUrl !== timerUrl) return next(args);
      const entries = (input.Entries as Record<string, unknown>[] | undefined) ?? [input];
      for (const entry of entries) {
        keep(String(entry.MessageBody), clock() + Number(entry.DelaySeconds ?? 0) * 1000);
        entry.DelaySeconds = 0;
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchVirtualDelays', priority: 'high' },
  );
}

/** `counters` less `times` × `idle`, each counter at least 0 (a sweep's calls beyond an idle one's). */
function subtract(counters: Counters, idle: Counters, times: number): Counters {
  const out: Record<string, number> = { ...counters };
  for (const [key, value] of Object.entries(idle)) out[key] = Math.max(0, (out[key] ?? 0) - value * times);
  return out;
}

/** A message handed to a handler as Lambda's SQS event source would, sent and received at `now`. */
function record(messageId: string, body: unknown, now: number): SQSRecord {
  const message = { MessageId: messageId, ReceiptHandle: messageId, Body: JSON.stringify(body) };
  return eventRecordOf({ ...message, MessageAttributes: {}, ReceiveCount: 1, SentAt: now }, 'bench', 'bench');
}

/** The anchors' assumptions, written out in the results beside the figures. */
export const OPEN_TIME_ASSUMPTIONS = prose`Per deadline, ten aggregates opened by one fan-out
    invocation stay open until their deadline (no reply arrives, so replies are independent) and are timed
    out by it; the clock is virtual, the handlers and the emulators real. all_in = the headline's end-to-end
    cost per million aggregates (replies arriving) + this deadline's cost over the 1-minute one's. Step
    Functions Standard with callbacks bills state transitions, not waiting: its figure is the headline's at
    every deadline (a .waitForTaskToken task waits up to a year at no charge). Lambda durable functions: a
    \`map\` of \`waitForCallback\` over the ten branches and a step for the result, at prices.json's
    \`lambda_durable_functions\` (operations as the SDK checkpoints them: 4 per branch — the map item's
    context, the callback's context, the callback, its submitter step — and 3 for the start, the map and the
    result; data written; data retained for the time open plus the default 14-day retention), one
    re-invocation per callback completed, the branches' and result's SQS sends, and the same clients as Step
    Functions. Step Functions Express: only where the whole wait fits its five minutes (the 1-minute
    deadline), with synchronous responders.`;

/** The figures by deadline as the results carry them, against the headline. */
export function openTimeResults(
  figures: readonly OpenTimeFigures[],
  context: {
    readonly headlineUsd: number;
    readonly stepFunctionsStandardUsd: number;
    /** The clients' share of the Step Functions figure (producer, responders, consumer). */
    readonly stepFunctionsClientsUsd: number;
    readonly prices: Prices;
  },
) {
  const oneMinute = figures.find((f) => f.open_seconds === 60) ?? figures[0];
  const base = oneMinute?.usd_per_million_aggregates ?? 0;
  const byDeadline = figures.map((f) => {
    const increase = f.usd_per_million_aggregates - base;
    const allIn = context.headlineUsd + increase;
    const result = {
      ...f,
      /** What it costs more than the 1-minute deadline, fanin's side. */
      increase_over_one_minute_usd_per_million: round(increase, 2),
      /** End to end with replies independent: the headline's cost plus that increase. */
      all_in_usd_per_million: round(allIn, 2),
      all_in_ratio_to_one_minute: round(allIn / context.headlineUsd, 4),
      /** The anchors on the same workload (null where one does not apply). */
      anchors: {
        step_functions_standard: context.stepFunctionsStandardUsd,
        lambda_durable_functions: round(
          durableFunctionsPerMillion(10, f.open_seconds, context.prices) + context.stepFunctionsClientsUsd,
          2,
        ),
        step_functions_express:
          f.open_seconds <= 300
            ? round(stepFunctionsExpressPerMillion(f.open_seconds, context.prices), 2)
            : null,
      },
    };
    return [String(f.open_seconds), result] as const;
  });
  return Object.fromEntries(byDeadline);
}
