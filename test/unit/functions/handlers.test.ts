import { describe, expect, it } from 'vitest';
import { isReplyDrainEvent } from '../../../functions/handlers.ts';

/** The Lambda entry points' own decisions, before any use case runs. */
describe('the reply function’s entry point', () => {
  it('tells a drain schedule’s event from an event source’s batch', () => {
    expect(isReplyDrainEvent({ drain: { partition: 0, batchSize: 1000 } })).toBe(true);
    // An event source's batch, even one that also carries a `drain` field, is a batch of records
    expect(isReplyDrainEvent({ Records: [] })).toBe(false);
    expect(isReplyDrainEvent({ Records: [], drain: { partition: 0, batchSize: 1 } })).toBe(false);
    expect(isReplyDrainEvent(null)).toBe(false);
    expect(isReplyDrainEvent('drain')).toBe(false);
  });
});
