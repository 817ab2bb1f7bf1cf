import { describe, expect, it } from 'vitest';
import { loadPrices } from '../../../../bench/cost/prices.ts';
import { addUsage, billPerMillion, usageOf } from '../../../../bench/cost/usage.ts';

/** Ten aggregates' worth of counted calls: fanin's handlers, the event source, the clients. */
const COUNTERS = {
  'sqs.billed|fanin:reply|std|SendMessage|output': 2,
  'sqs.billed|esm|std|ReceiveMessage|reply': 10,
  'sqs.billed|esm|std|ReceiveMessage(empty)|reply': 99,
  'sqs.billed|fanin:reply|fifo|SendMessage|output': 1,
  'sqs.billed|clients|std|SendMessage|reply': 10,
  'sqs.calls|fanin:reply|SendMessage|output': 1,
  'lambda.invocations|reply': 10,
  'ddb.calls|fanin:reply|PutItem': 10,
  'ddb.wcu|fanin:reply|PutItem': 15,
  'ddb.rcu|fanin:reply|GetItem': 5,
};

describe('the usage counted for one side of the bill', () => {
  it("is fanin's handlers and its event source's calls per aggregate, idle long polls left out", async () => {
    const usage = usageOf(COUNTERS, 'fanin', 10, await loadPrices());
    expect(usage.sqsStandard).toBeCloseTo(1.2, 9);
    expect(usage.sqsFifo).toBeCloseTo(0.1, 9);
    expect(usage.invocations).toBeCloseTo(1, 9);
    expect(usage.writeUnits).toBeCloseTo(1.5, 9);
    expect(usage.readUnits).toBeCloseTo(0.5, 9);
    // 10 DynamoDB calls × 8 ms + 1 SQS call × 12 ms + 10 invocations × 5 ms, over 10 aggregates
    expect(usage.lambdaMs).toBeCloseTo(14.2, 9);
  });

  it("is the clients' SQS requests alone on their side", async () => {
    const usage = usageOf(COUNTERS, 'clients', 10, await loadPrices());
    expect(usage).toEqual({
      writeUnits: 0,
      readUnits: 0,
      sqsStandard: 1,
      sqsFifo: 0,
      invocations: 0,
      lambdaMs: 0,
    });
  });

  it('adds two usages field by field', async () => {
    const prices = await loadPrices();
    const once = usageOf(COUNTERS, 'fanin', 10, prices);
    const twice = addUsage(once, once);
    expect(twice.writeUnits).toBeCloseTo(3, 9);
    expect(twice.lambdaMs).toBeCloseTo(28.4, 9);
  });
});

describe('the bill per million', () => {
  it('prices each service at the list prices, Lambda at 512 MB on arm64', async () => {
    const prices = await loadPrices();
    const bill = billPerMillion(usageOf(COUNTERS, 'fanin', 10, prices), prices);
    // 1.5 WRU × $0.625 + 0.5 RRU × $0.125
    expect(bill.dynamodb).toBeCloseTo(1, 9);
    // 1.2 standard × $0.40 + 0.1 FIFO × $0.50
    expect(bill.sqs).toBeCloseTo(0.53, 9);
    // 1 request × $0.20 + 14.2 ms × 0.5 GB × $0.0000133334 per GB-s × a million
    expect(bill.lambda).toBeCloseTo(0.2 + 0.0142 * 0.5 * 13.3334, 9);
    expect(bill.stepFunctions).toBe(0);
    expect(bill.total).toBeCloseTo(bill.dynamodb + bill.sqs + bill.lambda, 9);
  });

  it('prices Step Functions state transitions at $0.025 per thousand', async () => {
    const prices = await loadPrices();
    const none = { writeUnits: 0, readUnits: 0, sqsStandard: 0, sqsFifo: 0, invocations: 0, lambdaMs: 0 };
    expect(billPerMillion(none, prices, 13).stepFunctions).toBeCloseTo(325, 9);
  });
});
