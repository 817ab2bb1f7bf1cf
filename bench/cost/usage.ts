import { type Counters, total } from '../measure/counters.ts';
import { gbSecondPrice, type Prices } from './prices.ts';

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

/** No usage: the start of a usage that has only some of the services. */
export const NO_USAGE: Usage = {
  writeUnits: 0,
  readUnits: 0,
  sqsStandard: 0,
  sqsFifo: 0,
  invocations: 0,
  lambdaMs: 0,
};

/** Which counted calls belong to which side of the bill. */
export type Side = 'fanin' | 'clients';

const isFanin = (who: string): boolean => who === 'esm' || who.startsWith('fanin');
export const isClient = (who: string): boolean => who === 'clients';
/** Idle long polls depend on how long a benchmark waits, not on the work: they are priced separately. */
const notEmpty = (detail: string): boolean => !detail.includes('(empty)');

/** The usage in `counters` divided by `per` (e.g. aggregates), for one side: fanin. */
export function usageOf(counters: Counters, side: Side, per: number, prices: Prices): Usage {
  const mine = side === 'fanin' ? isFanin : isClient;
  const billed = (queue: 'std' | 'fifo') =>
    total(counters, 'sqs.billed', (who, d) => mine(who) && d.startsWith(`${queue}|`) && notEmpty(d)) / per;
  const sqs = { sqsStandard: billed('std'), sqsFifo: billed('fifo') };
  if (side === 'clients') return { ...NO_USAGE, ...sqs };
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
    ...sqs,
    invocations: invocations / per,
    lambdaMs: lambdaMs / per,
  };
}

/** Adds usages (e.g. an aggregate and the firing of its deadline timer). */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum = (key: keyof Usage) => [key, a[key] + b[key]];
  return Object.fromEntries((Object.keys(a) as (keyof Usage)[]).map(sum)) as Usage;
}

/** Dollars per million of whatever the usage is per, by service. */
export type Bill = ReturnType<typeof billPerMillion>;

/** Prices a usage per million units of work. */
export function billPerMillion(usage: Usage, prices: Prices, transitions = 0) {
  const million = 1_000_000;
  const gbSecond = gbSecondPrice(prices);
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
