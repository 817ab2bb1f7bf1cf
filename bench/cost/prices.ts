import { readFile } from 'node:fs/promises';

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
  return JSON.parse(await readFile(new URL('../prices.json', import.meta.url), 'utf8')) as Prices;
}

/** Dollars per GB-second of Lambda at the assumed architecture. */
export function gbSecondPrice(prices: Prices): number {
  return prices.assumptions.lambda_architecture === 'arm64'
    ? prices.lambda.arm64_per_gb_second
    : prices.lambda.x86_64_per_gb_second;
}
