import { readFile } from 'node:fs/promises';
import { prose } from '../report/format.ts';
import { gbSecondPrice, type Prices } from './prices.ts';

/** One line of the monthly bill of an idle deployment. */
export interface FixedItem {
  readonly item: string;
  readonly how: string;
  readonly usd: number;
}

/** What an idle deployment costs a month (README, "What it costs at rest"), priced from `prices.json`. */
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
  // The stack's alarms (test/unit/infra/observability.test.ts counts them in the template): a
  // not-empty alarm per DLQ (10 + N), a depth alarm per reply partition (N), the use cases' 3, and
  // infra/observability.ts's: errors and throttles of the 6 handlers (12), the table's read and
  // write throttles (2), the oldest message of each consumed queue (4 + N), failing sweeps and
  // distributor cycles (2), each handler's duration near its timeout (6) and the completion
  // latency's p99 (1).
  const alarms = 40 + 3 * n;
  const polled = 3 + n;
  const polls = polled * r.pollers_per_queue * (60 / r.long_poll_seconds) * MINUTES;
  const items: FixedItem[] = [
    line(
      'CloudWatch alarms',
      `40 + 3N = ${alarms} standard alarms × $${prices.cloudwatch.standard_alarm_per_month}`,
      alarms * prices.cloudwatch.standard_alarm_per_month,
    ),
    line(
      'CloudWatch dashboard',
      `1 dashboard (over 50 metrics, so not one of the 3 free ones) × $${prices.cloudwatch.dashboard_per_month}`,
      prices.cloudwatch.dashboard_per_month,
    ),
    line(
      'SQS empty receives (idle polling)',
      prose`${polled} consumed queues × ${r.pollers_per_queue} pollers × ${60 / r.long_poll_seconds} long
        polls/min = ${(polls / 1e6).toFixed(2)} M requests,
        ${((polls / polled / 1e6) * prices.sqs.standard_per_million_requests).toFixed(2)} $ per queue`,
      perM(polls, prices.sqs.standard_per_million_requests),
    ),
    ...scheduleItems(prices, topology),
  ];
  return { items, total: items.reduce((sum, i) => sum + i.usd, 0) };
}

/** The minutes of a month of 30 days. */
const MINUTES = 30 * 24 * 60;

/** An item of the monthly bill. */
const line = (item: string, how: string, usd: number): FixedItem => ({ item, how, usd });

const perM = (count: number, price: number) => (count / 1_000_000) * price;

/** The sweeper's and the distributor's invocations, reads, requests and logs on their schedules. */
function scheduleItems(prices: Prices, topology: Parameters<typeof fixedMonthly>[1]): FixedItem[] {
  const n = topology.replyPartitions;
  const r = prices.at_rest;
  const gbSecond = gbSecondPrice(prices);
  const gb = prices.assumptions.lambda_memory_mb / 1024;
  const logs = (invocations: number) =>
    ((invocations * r.log_kb_per_invocation) / 1024 / 1024) * prices.cloudwatch.logs_ingested_per_gb;
  const sweeps = (MINUTES * 60) / topology.sweepIntervalSeconds;
  const cycles = (MINUTES * 60) / topology.distributorIntervalSeconds;
  const invocation = (count: number, ms: number) =>
    perM(count, prices.lambda.per_million_requests) + count * (ms / 1000) * gb * gbSecond;
  return [
    line(
      'Sweeper invocations',
      `${sweeps.toLocaleString('en-US')} × ~${r.sweeper_ms} ms`,
      invocation(sweeps, r.sweeper_ms),
    ),
    line(
      'Sweeper reads',
      `${r.sweeper_due_shards} empty \`due\` queries per sweep × 0.5 RRU`,
      perM(sweeps * r.sweeper_due_shards * 0.5, prices.dynamodb.read_request_unit_per_million),
    ),
    line('Sweeper logs', `${r.log_kb_per_invocation} KB per invocation`, logs(sweeps)),
    line(
      'Distributor SQS requests',
      `N depth reads + 1 empty backlog receive per cycle`,
      perM(cycles * (n + 1), prices.sqs.standard_per_million_requests),
    ),
    line(
      'Distributor table',
      '2 consistent queries (1 RRU each) + N updates (1 WRU each) per cycle',
      perM(cycles * 2, prices.dynamodb.read_request_unit_per_million) +
        perM(cycles * n, prices.dynamodb.write_request_unit_per_million),
    ),
    line(
      'Distributor invocations',
      `${cycles.toLocaleString('en-US')} × ~${r.distributor_ms} ms`,
      invocation(cycles, r.distributor_ms),
    ),
    line('Distributor logs', `${r.log_kb_per_invocation} KB per invocation`, logs(cycles)),
  ];
}

/** The total README states for an idle deployment ("What it costs at rest"), if it can be found. */
export async function readmeAtRestTotal(): Promise<number | undefined> {
  try {
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.split('### What it costs at rest')[1]?.split('\n## ')[0] ?? '';
    const match = /\*\*total\*\*[^\n]*?\$([0-9.]+)/.exec(section);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}
