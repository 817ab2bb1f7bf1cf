import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A deadline decides on the replies it reads by the completion rules first:
 * a reply handler killed between the reply's write and its evaluation leaves the decision to the
 * deadline (the reply's redelivery comes only after the visibility timeout, here after the
 * deadline), and the deadline completes the aggregate by the rule that held — never as timed out.
 */
describe('a deadline evaluates the replies it reads', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'all', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      {
        name: 'count',
        fanOut: { type: 'none' },
        completion: { strategy: 'count', count: 2 },
        timeoutSeconds: 60,
      },
      { name: 'first', fanOut: { type: 'none' }, completion: { strategy: 'first' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  /** Opens `id`, records `replies` replies with the reply handler killed before its evaluation's read. */
  async function repliesWithoutEvaluation(definition: string, id: string, replies: number): Promise<void> {
    await fanin.sendRequest({ definition, aggregateId: id, expected: 3 });
    await fanin.drain();
    for (let r = 0; r < replies; r += 1)
      await fanin.sendReply({ v: r }, { 'fanin-aggregate-id': id, 'fanin-reply-id': String(r) });
    // The evaluation reads the aggregate in one query after the replies' puts: killed there.
    fanin.probe.crashAt({ name: 'DynamoDB.Query', touches: id }, 'before');
    try {
      await fanin.consumePartition(0);
    } finally {
      expect(fanin.probe.disarm()?.name).toBe('DynamoDB.Query');
    }
    expect(fanin.publications(id)).toEqual([]);
  }

  it.each([
    ['all', 3, 'all-arrived', 3],
    ['count', 2, 'count', 2],
    ['first', 1, 'first', 1],
  ])(
    '%s: replies recorded before the deadline complete it by their rule at the deadline, not as timed out',
    async (definition, replies, completedBy, received) => {
      // Prepare
      const id = `kill-${definition}`;
      await repliesWithoutEvaluation(definition, id, replies);

      // Act: the deadline passes before the reply's redelivery; the sweeper acts on it
      fanin.clock.advance(61_000);
      await fanin.sweep();

      // Assess
      const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
      expect(output).toMatchObject({ type: 'fanin.aggregate.completed', completedBy, counts: { received } });
      await fanin.drain();
      fanin.expectExactlyOneTerminalOutput(id, 'strict');
    },
  );

  it('replies that do not meet the rule at the deadline still time the aggregate out', async () => {
    // Prepare
    const id = 'kill-all-short';
    await repliesWithoutEvaluation('all', id, 2);

    // Act
    fanin.clock.advance(61_000);
    await fanin.sweep();

    // Assess
    const { output } = fanin.expectExactlyOneTerminalOutput(id, 'strict');
    expect(output).toMatchObject({
      type: 'fanin.aggregate.timed-out',
      completedBy: 'deadline',
      counts: { received: 2 },
    });
  });
});
