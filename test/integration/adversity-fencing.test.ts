import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DYNAMO_WRITES } from '../support/aws-probe.ts';
import { expectInvariants } from '../support/failpoints.ts';
import { FaninUnderTest } from '../support/fanin.ts';

/**
 * Completion is fenced: one invocation owns a completing aggregate for a lease derived from the
 * function timeout; a resumer may take over only once the lease has run out, and an owner that
 * lost its lease (paused past it, or a second resumer that read the header before the first
 * closed it) publishes nothing different and writes nothing. Counted by the recorder, below
 * SQS's FIFO deduplication.
 */
describe('fenced completion', () => {
  let fanin: FaninUnderTest;
  let n = 0;
  const definition = {
    name: 'fence',
    fanOut: { type: 'none' as const },
    completion: { strategy: 'all' as const },
    timeoutSeconds: 3600,
  };

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([definition], { functionTimeoutSeconds: 30 });
  });
  afterAll(() => fanin.stop());

  /** Opens an aggregate expecting `expected` replies and records all but the last. */
  async function almostComplete(expected: number): Promise<string> {
    n += 1;
    const id = `fence-${n}-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'fence', aggregateId: id, expected });
    await fanin.drain();
    for (let r = 0; r < expected - 1; r += 1) await reply(id, r);
    await fanin.drain();
    return id;
  }
  const reply = (id: string, r: number) =>
    fanin.sendReply(
      { r },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': String(r), 'fanin-definition': 'fence' },
    );

  /** Drives the aggregate into `completing` with its owner dead before it published anything. */
  async function stuckCompleting(expected: number): Promise<string> {
    const id = await almostComplete(expected);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'completed' }, 'before');
    await reply(id, expected - 1);
    await fanin.drain();
    expect(fanin.probe.disarm(), 'the completer was crashed before publishing').toBeDefined();
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'completing' });
    return id;
  }

  it('the completion lease is derived from the function timeout (30 s timeout: 120 s lease)', async () => {
    // Assess: the context's lease is the topology's, not a constant
    expect(fanin.topology.completionLeaseSeconds).toBe(120);
    expect(fanin.ctx.completionLeaseMs).toBe(120_000);
    const long = await FaninUnderTest.start([definition], { functionTimeoutSeconds: 900 });
    try {
      expect(long.ctx.completionLeaseMs).toBe(long.topology.completionLeaseSeconds * 1000);
      expect(long.ctx.completionLeaseMs).toBeGreaterThan(900_000);
    } finally {
      await long.stop();
    }
  });

  it('while the completer is within its lease, a redelivered reply and the sweeper publish nothing', async () => {
    // Kills the mutant "no lease check" (resumeCompletion resumes a completion whose lease still runs).
    // Prepare: the completer is held just before it publishes, well within its lease
    const id = await almostComplete(2);
    const pause = fanin.probe.pauseAt({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await reply(id, 1);
    const completer = fanin.consumePartition(0);
    await pause.reached;

    // Act: the same reply redelivered (another consumer), and a sweep, while the lease runs
    await reply(id, 1);
    await fanin.consumePartition(0);
    await fanin.sweep();
    pause.release();
    await completer;
    await fanin.drain();

    // Assess: published once, by the owner
    const output = await expectInvariants(fanin, id, { mode: 'strict' });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 2 } });
  });

  it('a completer paused past its lease while a resumer takes over publishes nothing different and closes nothing', async () => {
    // Kills the mutant "no fence at emitted/close" (the stale owner's writes are unconditional).
    // Prepare: the completer is held just before it publishes
    const id = await almostComplete(3);
    const pause = fanin.probe.pauseAt({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await reply(id, 2);
    const completer = fanin.consumePartition(0);
    await pause.reached;

    // Act: its lease runs out; the sweeper resumes and finishes; then the paused owner goes on
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    const closedBy = await fanin.ctx.store.getHeader(id);
    expect(closedBy).toMatchObject({ status: 'closed', outcome: 'completed' });
    const released = fanin.probe.now;
    pause.release();
    await completer.catch(() => undefined);
    await fanin.drain();

    // Assess: one content (its in-flight send cannot be recalled: content mode, stated here);
    // the stale owner wrote nothing to the aggregate after it was released
    const output = await expectInvariants(fanin, id, { mode: 'content' });
    expect(output).toMatchObject({ counts: { received: 3 } });
    const staleWrites = fanin.probe
      .callsAfter(released)
      .filter((c) => DYNAMO_WRITES.has(c.name) && c.keys.includes(`A#${id}`) && c.outcome === 'ok');
    expect(staleWrites.map((c) => c.name)).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toEqual(closedBy);
  });

  it('two resumers of the same expired lease running concurrently publish one content, never received 0', async () => {
    // Kills the mutant "resume without taking over the lease by compare-and-set".
    // Prepare
    const id = await stuckCompleting(3);
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);

    // Act
    await Promise.all([fanin.sweep().catch(() => 0), fanin.sweep().catch(() => 0)]);
    await fanin.drain();

    // Assess
    const output = await expectInvariants(fanin, id, { mode: 'content' });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 3 } });
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
  });

  it('a resumer that read the header before another resumer closed it publishes nothing different and writes nothing', async () => {
    // Kills the mutant "build a result from a closed aggregate" (the stale resumer published received: 0).
    // Prepare: resumer A is held at its second call on the aggregate, having read the header
    const id = await stuckCompleting(3);
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    const pause = fanin.probe.pauseAt({ touches: id }, 2);
    const resumerA = fanin.sweep().catch(() => 0);
    await pause.reached;

    // Act: resumer B runs from start to end, then A goes on
    await fanin.sweep().catch(() => 0);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
    const closedBy = await fanin.ctx.store.getHeader(id);
    const released = fanin.probe.now;
    pause.release();
    await resumerA;
    await fanin.drain();

    // Assess
    const output = await expectInvariants(fanin, id, { mode: 'content' });
    expect(output).toMatchObject({ counts: { received: 3 } });
    const staleWrites = fanin.probe
      .callsAfter(released)
      .filter((c) => DYNAMO_WRITES.has(c.name) && c.keys.includes(`A#${id}`) && c.outcome === 'ok');
    expect(staleWrites.map((c) => c.name)).toEqual([]);
    expect(await fanin.ctx.store.getHeader(id)).toEqual(closedBy);
  });
});
