import { describe, expect, it } from 'vitest';
import {
  type OpenTimeFigures,
  RESPONDER_RECIPIENTS,
  responderCosts,
} from '../../../../bench/run/open-time.ts';

/** What the benchmark reports of looking after the responders: a case's figures less the base's, per recipient. */
describe('responderCosts', () => {
  const figures = (over: Partial<OpenTimeFigures>): OpenTimeFigures => ({
    open_seconds: 30,
    aggregates: 10,
    timer_fires: 1,
    timer_sends: 1,
    sqs_calls: 3,
    invocations: 0.2,
    read_units: 5,
    write_units: 6,
    usd_per_million_aggregates: 6,
    outcomes: { completed: 10 },
    fired_late_ms_max: 0,
    ...over,
  });

  it('gives what a retry and a cancellation add over recipient deadlines alone, divided among the recipients', () => {
    const costs = responderCosts(
      figures({}),
      figures({
        timer_fires: 2,
        sqs_calls: 4,
        read_units: 10,
        write_units: 10,
        usd_per_million_aggregates: 10,
      }),
      figures({ sqs_calls: 4, usd_per_million_aggregates: 6.5 }),
    );
    expect(RESPONDER_RECIPIENTS).toBe(10);
    expect(costs.per_recipient.retry).toEqual({
      usd_per_million: 0.4,
      sqs_calls: 0.1,
      invocations: 0,
      timer_fires: 0.1,
      read_units: 0.5,
      write_units: 0.4,
    });
    expect(costs.per_recipient.cancellation).toMatchObject({
      usd_per_million: 0.05,
      sqs_calls: 0.1,
      write_units: 0,
    });
  });
});
