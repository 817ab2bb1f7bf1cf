import { type Counters, total } from '../measure/counters.ts';
import { gbSecondPrice, type Prices } from './prices.ts';
import { isClient, NO_USAGE, type Usage, usageOf } from './usage.ts';

/** The same scatter-gather as Step Functions Standard with callback tokens. */
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
    orchestration: { ...NO_USAGE, sqsStandard: fanOut, sqsFifo: 1 },
    clients: { ...clients, sqsStandard: Math.max(0, clients.sqsStandard - notNeeded / aggregates) },
  };
}

/** Step Functions Express for the same scatter-gather with synchronous responders. */
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

/** Lambda durable functions for the scatter-gather of `fanOut` branches open `openSeconds`. */
export function durableFunctionsPerMillion(fanOut: number, openSeconds: number, prices: Prices): number {
  const d = prices.lambda_durable_functions;
  const a = prices.assumptions;
  const operations = 3 + fanOut * d.operations_per_callback;
  const invocations = 1 + fanOut;
  const lambdaMs = invocations * a.lambda_ms_compute_per_invocation + (fanOut + 1) * a.lambda_ms_per_sqs_call;
  const gbSecond = gbSecondPrice(prices);
  const lambda =
    (invocations * prices.lambda.per_million_requests) / 1_000_000 +
    (lambdaMs / 1000) * (a.lambda_memory_mb / 1024) * gbSecond;
  const sqs =
    (fanOut * prices.sqs.standard_per_million_requests + prices.sqs.fifo_per_million_requests) / 1_000_000;
  const gb = (d.checkpoint_kb_per_aggregate * 1024) / 1024 ** 3;
  const months = (openSeconds / 86_400 + d.retention_days) / (365 / 12);
  const data = gb * d.data_written_per_gb + gb * months * d.data_retained_per_gb_month;
  const perAggregate = (operations * d.per_million_operations) / 1_000_000 + lambda + sqs + data;
  return perAggregate * 1_000_000;
}
