import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DYNAMO_WRITES } from '../../support/aws-probe.ts';
import { expectInvariants } from '../../support/failpoints.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

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

  /**
   * Drives the aggregate into `completing` with its owner failed before it published anything;
   * its reply is not redelivered yet (one poll, not a drain), so the sweeper is the resumer: a
   * completer that fails brings the aggregate's due entry forward to its lease's end.
   */
  async function stuckCompleting(expected: number): Promise<string> {
    const id = await almostComplete(expected);
    fanin.probe.crashAt({ name: 'SQS.SendMessage', queueRole: 'completed' }, 'before');
    await reply(id, expected - 1);
    await fanin.consumePartition(0);
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

    // Act: its lease runs out; the reply is delivered again (SQS redelivers after the visibility
    // timeout, which outlasts the lease) and its handler resumes and finishes; then the paused
    // owner goes on
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await reply(id, 2);
    await fanin.consumePartition(0);
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

  it('the seal leaves the due entry where the open put it: no index entry rewritten per completion', async () => {
    // Kills the mutant "the seal moves the due entry to the lease's end" (2 of an aggregate's
    // write units at fan-out 10: the index entry deleted and put again).
    // Prepare: the completer is held just after the seal, before it publishes
    const id = await almostComplete(2);
    const raw = async () =>
      (
        await fanin.clients.dynamo.send(
          new GetCommand({ TableName: fanin.topology.tableName, Key: { pk: `A#${id}`, sk: 'H' } }),
        )
      ).Item;
    const opened = await raw();
    const pause = fanin.probe.pauseAt({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await reply(id, 1);
    const completer = fanin.consumePartition(0);
    await pause.reached;

    // Act
    const sealed = await raw();
    pause.release();
    await completer;

    // Assess: sealed, and its due entry is still the deadline's
    expect(sealed).toMatchObject({ status: 'completing' });
    expect(opened?.dueAt).toBe(opened?.deadline);
    expect(sealed?.dueAt).toBe(opened?.dueAt);
    expect(sealed?.dueShard).toBe(opened?.dueShard);
    expect(Number(sealed?.dueAt)).toBeGreaterThan(Number(sealed?.leaseUntil));
  });
  it('a completer whose output fails brings the due entry to its lease end, and the sweeper alone finishes it', async () => {
    // Kills the mutant "a failed completer leaves its due entry at the deadline (no recoverAt)":
    // the failing reply is kept from coming back (its queue is not polled again), so only the
    // sweeper can finish, and it finds the aggregate only if the entry was brought forward.
    // Prepare
    const id = await almostComplete(2);
    const restore = fanin.probe.failEvery({ name: 'SQS.SendMessage', queueRole: 'completed' });
    await reply(id, 1);
    await fanin.consumePartition(0);
    restore();
    const header = await fanin.ctx.store.getHeader(id);
    expect(header).toMatchObject({ status: 'completing' });

    // Act: the lease runs out; one sweep, no redelivery
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();

    // Assess: closed by the sweep, one result
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed', outcome: 'completed' });
    const output = await expectInvariants(fanin, id, { mode: 'strict' });
    expect(output).toMatchObject({ counts: { received: 2 } });
    await fanin.drain();
  });
});

/**
 * A completer that crashes after the seal is finished by the redelivery of the message that made
 * the aggregate complete: every queue a handler consumes keeps a received message invisible past
 * the invocation and the lease it may take, so the redelivery finds the lease run out. Shown with
 * a short function timeout (10 s: lease 100 s), where six timeouts (60 s) would come back inside
 * the lease, and a deadline an hour away, so the sweeper cannot be what finishes it.
 */
describe('recovery of a crashed completer by redelivery', () => {
  let fanin: FaninUnderTest;
  const definition = {
    name: 'redeliver',
    fanOut: { type: 'none' as const },
    completion: { strategy: 'all' as const },
    timeoutSeconds: 3600,
  };

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([definition], { functionTimeoutSeconds: 10 });
  });
  afterAll(() => fanin.stop());

  const open = async (id: string) => {
    await fanin.sendRequest({ definition: 'redeliver', aggregateId: id, expected: 2 });
    await fanin.drain();
  };
  const reply = (id: string, r: number) =>
    fanin.sendReply(
      { r },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': String(r), 'fanin-definition': 'redeliver' },
    );

  it('a reply handler that crashed right after the seal is finished by its reply coming back, long before the deadline', async () => {
    // Kills the mutant "consumed queues keep 6 x the timeout only" (the redelivery comes back
    // within the lease, does nothing, is deleted, and the aggregate waits an hour for its deadline).
    // Prepare
    const id = `redeliver-reply-${Date.now().toString(36)}`;
    const start = fanin.clock.now;
    await open(id);
    await reply(id, 0);
    await fanin.drain();

    // Act: the process dies just after the seal; SQS hands the reply back after its visibility
    fanin.probe.crashAt({ name: 'DynamoDB.UpdateItem', touches: id }, 'after');
    await reply(id, 1);
    await fanin.drain();
    expect(fanin.probe.disarm(), 'the seal was crashed after').toBeDefined();

    // Assess: closed with both replies, no sweep involved, within minutes of the start
    const output = await expectInvariants(fanin, id, { mode: 'strict' });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 2 } });
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
    expect(fanin.clock.now - start).toBeLessThan(definition.timeoutSeconds * 1000);
  });

  it('a complete command that crashed right after the seal is finished by the command coming back', async () => {
    // Kills the mutant "control commands target open aggregates only" (the redelivered command
    // finds the aggregate completing, skips it, and it waits for its deadline).
    // Prepare
    const id = `redeliver-control-${Date.now().toString(36)}`;
    const start = fanin.clock.now;
    await open(id);
    await reply(id, 0);
    await fanin.drain();

    // Act
    fanin.probe.crashAt({ name: 'DynamoDB.UpdateItem', touches: id }, 'after');
    await fanin.sendControl({ command: 'complete', aggregateId: id });
    await fanin.drain();
    expect(fanin.probe.disarm(), 'the seal was crashed after').toBeDefined();

    // Assess
    const output = await expectInvariants(fanin, id, { mode: 'strict' });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { received: 1 } });
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'closed' });
    expect(fanin.clock.now - start).toBeLessThan(definition.timeoutSeconds * 1000);
  });
});
