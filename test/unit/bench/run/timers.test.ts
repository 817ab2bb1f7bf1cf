/** The deadline timers' firing as the results give it: per fired timer, arming and firing apart. */
import { describe, expect, it } from 'vitest';
import { loadPrices } from '../../../../bench/cost/prices.ts';
import {
  firingUsage,
  type TimerFiring,
  timerSqsCalls,
  timerVariantFigures,
} from '../../../../bench/run/timers.ts';

/** Ten timers fired in two invocations; their aggregates armed them from one fan-out invocation. */
const firing: TimerFiring = {
  variant: 'batched',
  definition: 'bench-timer-batched',
  aggregates: 10,
  requestsPerSecond: undefined,
  fired: 10,
  firedEarly: 0,
  outcomes: { 'fanin.aggregate.completed': 10 },
  counters: {
    'sqs.calls|esm|ReceiveMessage|timer': 2,
    'sqs.calls|esm|ReceiveMessage(empty)|timer': 50,
    'sqs.calls|esm|DeleteMessageBatch|timer': 2,
    'sqs.calls|fanin:timer|SendMessage|output': 10,
    'sqs.calls|clients|ReceiveMessage|output': 10,
    'sqs.billed|esm|std|ReceiveMessage|timer': 2,
    'lambda.invocations|timer': 2,
  },
  armingCounters: {
    'lambda.invocations|fan-out': 1,
    'sqs.calls|fanin:fan-out|SendMessageBatch|timer': 1,
    'sqs.calls|fanin:fan-out|SendMessageBatch|target': 10,
  },
};

describe("the deadline timers' figures", () => {
  it('gives how the timers were armed per aggregate and what their firing took per fired timer', async () => {
    const figures = timerVariantFigures(firing, await loadPrices());
    expect(figures.requests).toBe(
      'all at once, in SendMessageBatches of ten (as the arrival phases send them)',
    );
    expect(figures.requests_per_second).toBeNull();
    expect(figures.arming_per_aggregate).toEqual({ fan_out_invocations: 0.1, timer_sends: 0.1 });
    expect(figures.firing_per_aggregate).toEqual({
      receives: 0.2,
      deletes: 0.2,
      invocations: 0.2,
      records_per_invocation: 5,
    });
  });

  it('names a paced variant by its rate', async () => {
    const figures = timerVariantFigures({ ...firing, requestsPerSecond: 20 }, await loadPrices());
    expect(figures.requests).toBe('one SendMessage at a time, 20 per second');
    expect(figures.requests_per_second).toBe(20);
  });

  it("gives fanin's and its event source's SQS calls per fired timer and per reply, idle polls left out", () => {
    expect(timerSqsCalls(firing, 1)).toEqual({
      'esm DeleteMessageBatch|timer': 0.2,
      'esm ReceiveMessage|timer': 0.2,
      'fanin:timer SendMessage|output': 1,
    });
    expect(timerSqsCalls(firing, 10)['fanin:timer SendMessage|output']).toBe(0.1);
  });

  it('divides the usage by the timers fired, as if one had when none did', async () => {
    const prices = await loadPrices();
    expect(firingUsage(firing, prices)).toMatchObject({ invocations: 0.2, sqsStandard: 0.2 });
    expect(firingUsage({ ...firing, fired: 0 }, prices)).toMatchObject({ invocations: 2, sqsStandard: 2 });
  });
});
