import { describe, expect, it } from 'vitest';
import { EventBridgeModel, entrySize } from '../../../../sim/models/eventbridge.ts';
import { T0, world } from './fixtures.ts';

/**
 * The EventBridge model's own fast test: an entry's size as EventBridge's guide computes it
 * ("Calculating PutEvents event entry size": 14 bytes for a Time, the UTF-8 bytes of Source,
 * DetailType, Detail and each Resource), one to ten entries a call, an entry missing a field failed
 * on its own, a bus named by name or ARN, and the events each bus took. The conformance test
 * compares per-entry failures with moto's; this pins the sizes and the bus bookkeeping.
 */

const entry = (extra: Record<string, unknown> = {}) => ({
  Source: 'app',
  DetailType: 'Done',
  Detail: '{"a":1}',
  EventBusName: 'bus',
  ...extra,
});

function model() {
  const m = new EventBridgeModel(world());
  m.handle('CreateEventBusCommand', { Name: 'bus' });
  return m;
}

describe('entrySize', () => {
  it('counts 14 bytes for a Time and the UTF-8 bytes of Source, DetailType, Detail and Resources', () => {
    expect(entrySize({ Source: 'é', DetailType: 'ab', Detail: '{}' })).toBe(2 + 2 + 2);
    expect(
      entrySize({ Source: 'a', DetailType: 'b', Detail: 'c', Time: new Date(), Resources: ['rr', 'r'] }),
    ).toBe(14 + 3 + 3);
  });
});

describe('the EventBridge model', () => {
  it('takes one to ten entries a call', () => {
    const m = model();
    expect(() => m.handle('PutEventsCommand', { Entries: [] })).toThrow(/greater than or equal to 1/);
    expect(
      m.handle('PutEventsCommand', { Entries: Array.from({ length: 10 }, () => entry()) }).FailedEntryCount,
    ).toBe(0);
    expect(() =>
      m.handle('PutEventsCommand', { Entries: Array.from({ length: 11 }, () => entry()) }),
    ).toThrow(/less than or equal to 10/);
  });

  it('fails an entry without its detail on its own, and keeps the others on their bus, named or by ARN', () => {
    const m = model();
    const answer = m.handle('PutEventsCommand', {
      Entries: [
        entry(),
        entry({ Detail: '' }),
        entry({ EventBusName: 'arn:aws:events:us-east-1:000000000000:event-bus/bus' }),
        entry({ EventBusName: undefined }),
      ],
    });
    expect(answer.FailedEntryCount).toBe(1);
    expect(answer.Entries[1]).toMatchObject({ ErrorCode: 'InvalidArgument' });
    expect(answer.Entries[0].EventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.events('bus')).toHaveLength(2);
    expect(m.events('default')).toHaveLength(1);
    expect(m.events('bus')[0]).toMatchObject({
      source: 'app',
      detailType: 'Done',
      detail: '{"a":1}',
      time: T0,
    });
  });

  it('refuses a bus created twice', () => {
    const m = model();
    expect(() => m.handle('CreateEventBusCommand', { Name: 'bus' })).toThrow(
      expect.objectContaining({ name: 'ResourceAlreadyExistsException' }),
    );
    expect(m.handle('CreateEventBusCommand', { Name: 'other' }).EventBusArn).toBe(
      'arn:aws:events:us-east-1:000000000000:event-bus/other',
    );
  });
});
