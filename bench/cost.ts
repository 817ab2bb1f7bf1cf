import { readFile } from 'node:fs/promises';
import { type Counters, total } from './meter.ts';

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
  readonly step_functions: { readonly standard_per_thousand_state_transitions: number };
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
