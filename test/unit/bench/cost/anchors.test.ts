import { describe, expect, it } from 'vitest';
import {
  durableFunctionsPerMillion,
  expressBreakEvenSeconds,
  stepFunctionsExpressPerMillion,
  stepFunctionsUsage,
} from '../../../../bench/cost/anchors.ts';
import { loadPrices } from '../../../../bench/cost/prices.ts';

describe('Step Functions Standard on the same scatter-gather', () => {
  it('takes fan-out + 3 transitions, a send per branch and a FIFO send, no ingress or reply message', async () => {
    const counters = {
      'sqs.billed|clients|std|SendMessageBatch|ingress': 1,
      'sqs.billed|clients|std|SendMessage|reply': 10,
      'sqs.billed|clients|std|ReceiveMessage|output': 1,
    };
    const sfn = stepFunctionsUsage(10, counters, 1, await loadPrices());
    expect(sfn.transitions).toBe(13);
    expect(sfn.orchestration.sqsStandard).toBe(10);
    expect(sfn.orchestration.sqsFifo).toBe(1);
    expect(sfn.clients.sqsStandard).toBeCloseTo(1, 9);
  });
});

describe('Step Functions Express', () => {
  it('bills $1 per million executions, the duration in 100 ms steps at 64 MB, and the FIFO send', async () => {
    const prices = await loadPrices();
    // 1 s × 1/16 GB × $0.06 per GB-hour, a million times: $1.0417
    expect(stepFunctionsExpressPerMillion(1, prices)).toBeCloseTo(1 + 0.5 + 1.0416667, 6);
    // 50 ms is billed as 100 ms
    expect(stepFunctionsExpressPerMillion(0.05, prices)).toBeCloseTo(1 + 0.5 + 0.1041667, 6);
  });

  it('is cheaper than a figure up to the longest answer time priced below it', async () => {
    // $1.50 + $1.0417 per billed second < $2.00 up to 0.4 s
    expect(expressBreakEvenSeconds(2, await loadPrices())).toBe(0.4);
    expect(expressBreakEvenSeconds(1, await loadPrices())).toBe(0);
  });
});

describe('Lambda durable functions', () => {
  it('bills 43 operations, 11 invocations, 11 sends and 13 KB of checkpoints for ten callbacks', async () => {
    const prices = await loadPrices();
    const gb = 13 / 1024 / 1024;
    const operations = 43 * 8;
    const lambda = 11 * 0.2 + 0.187 * 0.5 * 13.3334;
    const sqs = 10 * 0.4 + 0.5;
    const data = (gb * 0.25 + gb * (14 / (365 / 12)) * 0.15) * 1e6;
    expect(durableFunctionsPerMillion(10, 0, prices)).toBeCloseTo(operations + lambda + sqs + data, 6);
  });

  it('costs more the longer it stays open by its retained checkpoints alone', async () => {
    const prices = await loadPrices();
    const month =
      durableFunctionsPerMillion(10, 30 * 86_400, prices) - durableFunctionsPerMillion(10, 0, prices);
    expect(month).toBeCloseTo((13 / 1024 / 1024) * (30 / (365 / 12)) * 0.15 * 1e6, 6);
  });
});
