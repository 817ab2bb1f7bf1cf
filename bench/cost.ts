import { readFile } from 'node:fs/promises';
import { type Counters, total } from './counters.ts';

/** The dated price table, `bench/prices.json`. */
export interface Prices {
  readonly taken: string;
  readonly region: string;
  readonly note: string;
  readonly dynamodb: {
    readonly write_request_unit_per_million: number;
    readonly read_request_unit_per_million: number;
  };
  readonly sqs: {
    readonly standard_per_million_requests: number;
    readonly fifo_per_million_requests: number;
    readonly billed_chunk_bytes: number;
  };
  readonly lambda: {
    readonly per_million_requests: number;
    readonly arm64_per_gb_second: number;
    readonly x86_64_per_gb_second: number;
  };
  readonly step_functions: {
    readonly standard_per_thousand_state_transitions: number;
    readonly express_per_million_requests: number;
    readonly express_per_gb_hour_first_1000: number;
    readonly express_billed_memory_mb: number;
    readonly express_duration_increment_ms: number;
  };
  readonly lambda_durable_functions: {
    readonly per_million_operations: number;
    readonly data_written_per_gb: number;
    readonly data_retained_per_gb_month: number;
    readonly retention_days: number;
    readonly operations_per_callback: number;
    readonly checkpoint_kb_per_aggregate: number;
  };
  readonly cloudwatch: {
    readonly standard_alarm_per_month: number;
    readonly dashboard_per_month: number;
    readonly logs_ingested_per_gb: number;
  };
  readonly at_rest: {
    readonly pollers_per_queue: number;
    readonly long_poll_seconds: number;
    readonly sweeper_ms: number;
    readonly sweeper_due_shards: number;
    readonly distributor_ms: number;
    readonly log_kb_per_invocation: number;
  };
  readonly eventbridge: Readonly<Record<string, number | string>>;
  readonly assumptions: {
    readonly lambda_memory_mb: number;
    readonly lambda_architecture: 'arm64' | 'x86_64';
    readonly lambda_ms_per_dynamodb_call: number;
    readonly lambda_ms_per_sqs_call: number;
    readonly lambda_ms_compute_per_invocation: number;
  } & Readonly<Record<string, unknown>>;
}

/** Reads `bench/prices.json`. */
export async function loadPrices(): Promise<Prices> {
  return JSON.parse(await readFile(new URL('./prices.json', import.meta.url), 'utf8')) as Prices;
}

/** Billable usage of one aggregate, as counted. */
export interface Usage {
  readonly writeUnits: number;
  readonly readUnits: number;
  readonly sqsStandard: number;
  readonly sqsFifo: number;
  readonly invocations: number;
  /** Estimated billed Lambda milliseconds (see `prices.json` assumptions). */
  readonly lambdaMs: number;
}

/** Which counted calls belong to which side of the bill. */
export type Side = 'fanin' | 'clients';

const isFanin = (who: string): boolean => who === 'esm' || who.startsWith('fanin');
const isClient = (who: string): boolean => who === 'clients';
/** Idle long polls depend on how long a benchmark waits, not on the work: they are priced separately. */
const notEmpty = (detail: string): boolean => !detail.includes('(empty)');

/**
 * The usage in `counters` divided by `per` (e.g. aggregates), for one side: fanin (its handlers,
 * and Lambda's event source mapping polling for them) or the clients (producer, responders, result
 * consumer).
 */
export function usageOf(counters: Counters, side: Side, per: number, prices: Prices): Usage {
  const mine = side === 'fanin' ? isFanin : isClient;
  const sqsStandard = total(
    counters,
    'sqs.billed',
    (who, d) => mine(who) && d.startsWith('std|') && notEmpty(d),
  );
  const sqsFifo = total(
    counters,
    'sqs.billed',
    (who, d) => mine(who) && d.startsWith('fifo|') && notEmpty(d),
  );
  if (side === 'clients') {
    return {
      writeUnits: 0,
      readUnits: 0,
      sqsStandard: sqsStandard / per,
      sqsFifo: sqsFifo / per,
      invocations: 0,
      lambdaMs: 0,
    };
  }
  const invocations = total(counters, 'lambda.invocations');
  const inHandlers = (who: string) => who.startsWith('fanin:');
  const dynamoCalls = total(counters, 'ddb.calls', inHandlers);
  const sqsCalls = total(counters, 'sqs.calls', (who, d) => inHandlers(who) && notEmpty(d));
  const a = prices.assumptions;
  const lambdaMs =
    dynamoCalls * a.lambda_ms_per_dynamodb_call +
    sqsCalls * a.lambda_ms_per_sqs_call +
    invocations * a.lambda_ms_compute_per_invocation;
  return {
    writeUnits: total(counters, 'ddb.wcu', isFanin) / per,
    readUnits: total(counters, 'ddb.rcu', isFanin) / per,
    sqsStandard: sqsStandard / per,
    sqsFifo: sqsFifo / per,
    invocations: invocations / per,
    lambdaMs: lambdaMs / per,
  };
}

/** Adds usages (e.g. an aggregate and the firing of its deadline timer). */
export function addUsage(a: Usage, b: Usage): Usage {
  return {
    writeUnits: a.writeUnits + b.writeUnits,
    readUnits: a.readUnits + b.readUnits,
    sqsStandard: a.sqsStandard + b.sqsStandard,
    sqsFifo: a.sqsFifo + b.sqsFifo,
    invocations: a.invocations + b.invocations,
    lambdaMs: a.lambdaMs + b.lambdaMs,
  };
}

/** Dollars per million of whatever the usage is per, by service. */
export interface Bill {
  readonly dynamodb: number;
  readonly sqs: number;
  readonly lambda: number;
  readonly stepFunctions: number;
  readonly total: number;
}

/** Prices a usage per million units of work. */
export function billPerMillion(usage: Usage, prices: Prices, transitions = 0): Bill {
  const million = 1_000_000;
  const gbSecond =
    prices.assumptions.lambda_architecture === 'arm64'
      ? prices.lambda.arm64_per_gb_second
      : prices.lambda.x86_64_per_gb_second;
  const dynamodb =
    usage.writeUnits * prices.dynamodb.write_request_unit_per_million +
    usage.readUnits * prices.dynamodb.read_request_unit_per_million;
  const sqs =
    usage.sqsStandard * prices.sqs.standard_per_million_requests +
    usage.sqsFifo * prices.sqs.fifo_per_million_requests;
  const lambda =
    usage.invocations * prices.lambda.per_million_requests +
    (usage.lambdaMs / 1000) * (prices.assumptions.lambda_memory_mb / 1024) * gbSecond * million;
  const stepFunctions =
    (transitions * million * prices.step_functions.standard_per_thousand_state_transitions) / 1000;
  return { dynamodb, sqs, lambda, stepFunctions, total: dynamodb + sqs + lambda + stepFunctions };
}

/**
 * The same scatter-gather as Step Functions Standard with callback tokens (see the assumptions in
 * `prices.json`): a Map over the branches, each a `.waitForTaskToken` SQS task, then a Pass state
 * and an SQS task for the result. Its client side is fanin's minus what Step Functions does not
 * need: the request is started with StartExecution (no ingress message) and each responder answers
 * with SendTaskSuccess (no reply message).
 */
export function stepFunctionsUsage(
  fanOut: number,
  counters: Counters,
  aggregates: number,
  prices: Prices,
): { transitions: number; orchestration: Usage; clients: Usage } {
  const clients = usageOf(counters, 'clients', aggregates, prices);
  const notNeeded = total(
    counters,
    'sqs.billed',
    (who, detail) => isClient(who) && (detail.endsWith('|ingress') || detail.endsWith('|reply')),
  );
  return {
    transitions: fanOut + 3,
    orchestration: {
      writeUnits: 0,
      readUnits: 0,
      sqsStandard: fanOut,
      sqsFifo: 1,
      invocations: 0,
      lambdaMs: 0,
    },
    clients: { ...clients, sqsStandard: Math.max(0, clients.sqsStandard - notNeeded / aggregates) },
  };
}

/**
 * Step Functions Express for the same scatter-gather with synchronous responders (Express has no
 * callback tokens): one execution whose Map calls the branches in parallel and waits for them,
 * then sends the result to a FIFO queue. Per million aggregates, for an execution lasting
 * `seconds` (the slowest responder's answer time).
 */
export function stepFunctionsExpressPerMillion(seconds: number, prices: Prices): number {
  const sf = prices.step_functions;
  const billedSeconds =
    (Math.ceil((seconds * 1000) / sf.express_duration_increment_ms) * sf.express_duration_increment_ms) /
    1000;
  const gbSeconds = billedSeconds * (sf.express_billed_memory_mb / 1024);
  const duration = (gbSeconds * sf.express_per_gb_hour_first_1000) / 3600;
  return sf.express_per_million_requests + duration * 1_000_000 + prices.sqs.fifo_per_million_requests;
}

/**
 * The longest answer time (in seconds, at most Express's five minutes) for which Step Functions
 * Express costs less than `faninPerMillion`, or 0 if it never does.
 */
export function expressBreakEvenSeconds(faninPerMillion: number, prices: Prices): number {
  let best = 0;
  for (let ms = 100; ms <= 300_000; ms += 100) {
    if (stepFunctionsExpressPerMillion(ms / 1000, prices) < faninPerMillion) best = ms / 1000;
    else break;
  }
  return best;
}

/**
 * What replies cost at the least, per million aggregates of `fanOut` replies, whatever the design,
 * as long as each reply is an SQS message a responder sends, a Lambda event source receives and
 * deletes, and DynamoDB makes durable before it is acknowledged: the responder's send, the receives
 * (`messagesPerReceive` messages each: a long poll returns as soon as one message is there, so at
 * low rates one each, whatever the batch size), the delete and the invocation of its batch
 * (`repliesPerBatch` replies), and `writeUnitsPerReply` (1 for a kilobyte reply alone in its item;
 * less when the replies of one aggregate are stored together). Nothing else is counted (no read,
 * no Lambda duration, no request, fan-out, open, seal, close or result), so any design costs more.
 */
export function replyFloorPerMillion(fanOut: number, batching: ReplyFloorBatching, prices: Prices): number {
  return replyFloorBill(fanOut, batching, prices).total;
}

/** How the replies of {@link replyFloorPerMillion} are batched, received and stored. */
export interface ReplyFloorBatching {
  readonly repliesPerBatch: number;
  readonly messagesPerReceive?: number;
  readonly writeUnitsPerReply?: number;
}

/**
 * {@link replyFloorPerMillion} by service: SQS (the responder's send, the receives and the
 * delete), Lambda (the batch's invocation, no duration) and DynamoDB (the reply's write units).
 * What a design spends beyond it, service by service, is the aggregate's own work.
 */
export function replyFloorBill(fanOut: number, batching: ReplyFloorBatching, prices: Prices): Bill {
  const perBatch = Math.min(10, batching.repliesPerBatch);
  const perReceive = Math.min(10, batching.messagesPerReceive ?? perBatch);
  const sqs = prices.sqs.standard_per_million_requests * (1 + 1 / perReceive + 1 / perBatch) * fanOut;
  const lambda = (prices.lambda.per_million_requests / batching.repliesPerBatch) * fanOut;
  const dynamodb =
    prices.dynamodb.write_request_unit_per_million * (batching.writeUnitsPerReply ?? 1) * fanOut;
  return { dynamodb, sqs, lambda, stepFunctions: 0, total: dynamodb + sqs + lambda };
}

/**
 * The floor's batching for a phase as measured: its replies per batch and per receive, and the
 * write units per reply of its packs — `packedUnitsPerReply` (a whole aggregate's replies in one
 * pack) when a batch held all `fanOut` replies of an aggregate, 1 (a reply alone in its item) when
 * it held one, in proportion between. A floor for the batching the pattern got, not for the
 * batching a better consumer could get.
 */
export function measuredFloorBatching(
  measured: {
    readonly replies_per_batch: number;
    readonly reply_receives: number;
    readonly replies_per_aggregate_per_batch: number;
  },
  fanOut: number,
  packedUnitsPerReply: number,
): ReplyFloorBatching {
  const ofOne = Math.min(fanOut, Math.max(1, measured.replies_per_aggregate_per_batch));
  const share = fanOut > 1 ? (ofOne - 1) / (fanOut - 1) : 1;
  return {
    repliesPerBatch: Math.max(1, measured.replies_per_batch),
    messagesPerReceive: measured.reply_receives > 0 ? Math.max(1, 1 / measured.reply_receives) : 1,
    writeUnitsPerReply: 1 - (1 - packedUnitsPerReply) * share,
  };
}

/** One line of the monthly bill of an idle deployment. */
export interface FixedItem {
  readonly item: string;
  readonly how: string;
  readonly usd: number;
}

/**
 * What an idle deployment costs a month (README, "What it costs at rest"), priced from
 * `prices.json`: alarms, the event sources' long polls of each consumed queue, the sweeper and the
 * distributor on their schedules. None of it depends on the number of aggregates.
 */
export function fixedMonthly(
  prices: Prices,
  topology: {
    readonly replyPartitions: number;
    readonly sweepIntervalSeconds: number;
    readonly distributorIntervalSeconds: number;
  },
): { readonly items: readonly FixedItem[]; readonly total: number } {
  const n = topology.replyPartitions;
  const r = prices.at_rest;
  const minutes = 30 * 24 * 60;
  const gbSecond =
    prices.assumptions.lambda_architecture === 'arm64'
      ? prices.lambda.arm64_per_gb_second
      : prices.lambda.x86_64_per_gb_second;
  const gb = prices.assumptions.lambda_memory_mb / 1024;
  const perM = (count: number, price: number) => (count / 1_000_000) * price;
  const logs = (invocations: number) =>
    ((invocations * r.log_kb_per_invocation) / 1024 / 1024) * prices.cloudwatch.logs_ingested_per_gb;
  const sweeps = (minutes * 60) / topology.sweepIntervalSeconds;
  const cycles = (minutes * 60) / topology.distributorIntervalSeconds;
  // The stack's alarms (test/unit/infra/observability.test.ts counts them in the template): a
  // not-empty alarm per DLQ (10 + N), a depth alarm per reply partition (N), the use cases' 3, and
  // infra/observability.ts's: errors and throttles of the 6 handlers (12), the table's read and
  // write throttles (2), the oldest message of each consumed queue (4 + N), failing sweeps and
  // distributor cycles (2), each handler's duration near its timeout (6) and the completion
  // latency's p99 (1).
  const alarms = 40 + 3 * n;
  const polled = 3 + n;
  const polls = polled * r.pollers_per_queue * (60 / r.long_poll_seconds) * minutes;
  const invocation = (count: number, ms: number) =>
    perM(count, prices.lambda.per_million_requests) + count * (ms / 1000) * gb * gbSecond;
  const items: FixedItem[] = [
    {
      item: 'CloudWatch alarms',
      how: `40 + 3N = ${alarms} standard alarms × $${prices.cloudwatch.standard_alarm_per_month}`,
      usd: alarms * prices.cloudwatch.standard_alarm_per_month,
    },
    {
      item: 'CloudWatch dashboard',
      how: `1 dashboard (over 50 metrics, so not one of the 3 free ones) × $${prices.cloudwatch.dashboard_per_month}`,
      usd: prices.cloudwatch.dashboard_per_month,
    },
    {
      item: 'SQS empty receives (idle polling)',
      how: `${polled} consumed queues × ${r.pollers_per_queue} pollers × ${60 / r.long_poll_seconds} long polls/min = ${(polls / 1e6).toFixed(2)} M requests, ${((polls / polled / 1e6) * prices.sqs.standard_per_million_requests).toFixed(2)} $ per queue`,
      usd: perM(polls, prices.sqs.standard_per_million_requests),
    },
    {
      item: 'Sweeper invocations',
      how: `${sweeps.toLocaleString('en-US')} × ~${r.sweeper_ms} ms`,
      usd: invocation(sweeps, r.sweeper_ms),
    },
    {
      item: 'Sweeper reads',
      how: `${r.sweeper_due_shards} empty \`due\` queries per sweep × 0.5 RRU`,
      usd: perM(sweeps * r.sweeper_due_shards * 0.5, prices.dynamodb.read_request_unit_per_million),
    },
    { item: 'Sweeper logs', how: `${r.log_kb_per_invocation} KB per invocation`, usd: logs(sweeps) },
    {
      item: 'Distributor SQS requests',
      how: `N depth reads + 1 empty backlog receive per cycle`,
      usd: perM(cycles * (n + 1), prices.sqs.standard_per_million_requests),
    },
    {
      item: 'Distributor table',
      how: '2 consistent queries (1 RRU each) + N updates (1 WRU each) per cycle',
      usd:
        perM(cycles * 2, prices.dynamodb.read_request_unit_per_million) +
        perM(cycles * n, prices.dynamodb.write_request_unit_per_million),
    },
    {
      item: 'Distributor invocations',
      how: `${cycles.toLocaleString('en-US')} × ~${r.distributor_ms} ms`,
      usd: invocation(cycles, r.distributor_ms),
    },
    { item: 'Distributor logs', how: `${r.log_kb_per_invocation} KB per invocation`, usd: logs(cycles) },
  ];
  return { items, total: items.reduce((sum, i) => sum + i.usd, 0) };
}

/** The total README states for an idle deployment ("What it costs at rest"), if it can be found. */
export async function readmeAtRestTotal(): Promise<number | undefined> {
  try {
    const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.split('### What it costs at rest')[1]?.split('\n## ')[0] ?? '';
    const match = /\*\*total\*\*[^\n]*?\$([0-9.]+)/.exec(section);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
