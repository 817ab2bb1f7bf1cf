import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweep } from '../../../shared/use-cases/timers.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * One output channel or one due item failing for good must not hurt the others, and must be
 * heard: a persistent EventBridge failure neither re-sends the SQS result nor closes the
 * aggregate without the event, and alarms; a poison due item neither stops nor starves the
 * sweep of the others, and alarms. EventBridge is answered by the probe (no emulator needed).
 */
/** Reading a poison aggregate fails; writing to it (e.g. deferring it) still works. */
const READS = new Set(['DynamoDB.GetItem', 'DynamoDB.Query', 'DynamoDB.BatchGetItem']);

describe('failing channels and poison due items', () => {
  let fanin: FaninUnderTest;
  let n = 0;
  const nextId = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'evented',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        outputs: { eventBridge: true },
        timeoutSeconds: 3600,
      },
      { name: 'due', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
    fanin.eventBusName = 'fanin-test-bus';
    fanin.probe.stubEventBridge();
    fanin.buildContext();
  });
  afterAll(() => fanin.stop());

  it('a persistent EventBridge failure: the SQS result is published once, the aggregate stays completing, an alarm is logged; once EventBridge recovers the next sweep publishes the event and closes', async () => {
    // Kills the mutant "re-publish every channel on resume" (the SQS result re-sent on every sweep).
    // Prepare
    const id = nextId('eb');
    const heal = fanin.probe.failEvery({ name: 'EventBridge.PutEvents' });
    await fanin.sendRequest({ definition: 'evented', aggregateId: id, expected: 1 });
    await fanin.drain();

    // Act: the reply completes it; EventBridge refuses; several sweeps after the lease
    await fanin.sendReply(
      { r: 0 },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '0', 'fanin-definition': 'evented' },
    );
    await fanin.drain();
    for (let i = 0; i < 3; i += 1) {
      fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
      await fanin.sweep().catch(() => 0);
      await fanin.drain();
    }

    // Assess: SQS once, no event, still completing, alarmed
    const result = `${id}/result`;
    expect(fanin.published('completed').filter((p) => p.body.id === result)).toHaveLength(1);
    expect(fanin.published('eventbridge').filter((p) => p.body.id === result)).toHaveLength(0);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'completing' });
    expect(fanin.alarms('output-channel-failed').length).toBeGreaterThan(0);

    // Act: EventBridge recovers
    heal();
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    await fanin.drain();

    // Assess: the event once, the SQS result still once, closed
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 1 } });
    expect(fanin.published('eventbridge').filter((p) => p.body.id === result)).toHaveLength(1);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
  });

  it('due items that always fail do not stop the sweep of the others in the same sweep, and each failure is alarmed', async () => {
    // Kills the mutant "rethrow the first failing due item".
    // Prepare: 12 aggregates past their deadline; reading 4 of them always fails (a poison state)
    const ids = Array.from({ length: 12 }, () => nextId('due'));
    for (const id of ids) await fanin.sendRequest({ definition: 'due', aggregateId: id, expected: 1 });
    await fanin.drain();
    const poison = ids.slice(0, 4);
    const heal = fanin.probe.failEvery({
      where: (c) => READS.has(c.name) && poison.some((p) => c.keys.includes(`A#${p}`)),
    });
    fanin.clock.advance(61_000);
    const before = fanin.alarms('due-item-failed').length;

    // Act
    await fanin.sweep().catch(() => 0);
    await fanin.drain();

    // Assess
    for (const id of ids.slice(4)) {
      expect(fanin.expectExactlyOneTerminalOutput(id, 'strict').output).toMatchObject({
        type: 'fanin.aggregate.timed-out',
      });
    }
    const alarms = fanin.alarms('due-item-failed').slice(before);
    for (const id of poison)
      expect(
        alarms.some((a) => a.fields.aggregateId === id),
        `alarm for ${id}`,
      ).toBe(true);
    // once they can be read again, a later sweep (after any deferral) ends them too
    heal();
    fanin.clock.advance(3_600_000);
    await fanin.sweep();
    await fanin.drain();
    for (const id of poison) fanin.expectExactlyOneTerminalOutput(id, 'strict');
  });

  it('poison due items filling the sweep limit do not starve the others: repeated sweeps of that limit handle every healthy item', async () => {
    // Kills the mutant "take the first `limit` due items in shard order, whatever failed before".
    // Prepare: 12 aggregates past their deadline; 4 poison; each sweep takes at most 4
    const ids = Array.from({ length: 12 }, () => nextId('starve'));
    for (const id of ids) await fanin.sendRequest({ definition: 'due', aggregateId: id, expected: 1 });
    await fanin.drain();
    const poison = ids.slice(0, 4);
    const heal = fanin.probe.failEvery({
      where: (c) => READS.has(c.name) && poison.some((p) => c.keys.includes(`A#${p}`)),
    });
    fanin.clock.advance(61_000);

    // Act: six sweeps of at most 4 items (8 healthy ones need two, if poison never takes their place)
    for (let i = 0; i < 6; i += 1) {
      await sweep(fanin.ctx, 4).catch(() => 0);
      fanin.clock.advance(1_000);
    }
    await fanin.drain();
    heal();

    // Assess
    for (const id of ids.slice(4)) fanin.expectExactlyOneTerminalOutput(id, 'strict');
  });
});
