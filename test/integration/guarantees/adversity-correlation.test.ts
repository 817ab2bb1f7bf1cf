import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../../bench/workload/random.ts';
import type { Publication } from '../../support/aws-probe.ts';
import { expectInvariants, membersOf } from '../../support/failpoints.ts';
import { FaninUnderTest, type OutputBody } from '../../support/fanin.ts';

/**
 * A reply is judged by its aggregate's own definition and its own expected reply ids. Whatever a
 * message's `fanin-definition`, `fanin-aggregate-id` and `fanin-reply-id` attributes say (another
 * definition, another aggregate, nothing, something huge), it never counts where it does not
 * belong, and it is never lost: it is counted, or it ends on the error, unknown or late output.
 */
describe('correlation under untrusted attributes', () => {
  let fanin: FaninUnderTest;
  let n = 0;
  const nextId = (name: string) => `${name}-${++n}-${Date.now().toString(36)}`;
  const splitTarget = `adv-split-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'defA', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 3600 },
      { name: 'defB', fanOut: { type: 'none' }, completion: { strategy: 'first' }, timeoutSeconds: 3600 },
      {
        name: 'split',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: splitTarget },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
      },
      {
        name: 'fzcount',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: splitTarget },
        completion: { strategy: 'count', count: 2 },
        timeoutSeconds: 60,
      },
    ]);
    await fanin.targetQueue(splitTarget, true);
  });
  afterAll(() => fanin.stop());

  /** Outputs (error, unknown, late) that carry the SQS message `messageId` as their original message. */
  const routed = (messageId: string): Publication[] =>
    fanin.probe.published.filter(
      (p) => (p.body.message as { messageId?: unknown } | undefined)?.messageId === messageId,
    );

  it('a reply naming another definition never completes the aggregate: it goes to the error output naming both definitions', async () => {
    // Kills the mutant "take the definition from the reply's fanin-definition attribute instead of the header".
    // Prepare: an aggregate of defA (all, 3 expected)
    const id = nextId('mismatch');
    await fanin.sendRequest({ definition: 'defA', aggregateId: id, expected: 3 });
    await fanin.drain();

    // Act: one reply that says it is of defB (strategy first)
    const forged = await fanin.sendReply(
      { forged: true },
      { 'fanin-aggregate-id': id, 'fanin-reply-id': '0', 'fanin-definition': 'defB' },
    );
    await fanin.drain();

    // Assess: not completed; on the error output, with a reason naming both definitions
    fanin.expectNoTerminalOutput(id);
    expect(await fanin.ctx.store.getHeader(id)).toMatchObject({ status: 'open' });
    const errors = routed(forged).filter((p) => p.channel === 'error');
    expect(errors).toHaveLength(1);
    expect(String(errors[0]?.body.reason)).toContain('defA');
    expect(String(errors[0]?.body.reason)).toContain('defB');

    // Act: the three real replies
    for (const r of ['0', '1', '2'])
      await fanin.sendReply(
        { r },
        { 'fanin-aggregate-id': id, 'fanin-reply-id': r, 'fanin-definition': 'defA' },
      );
    await fanin.drain();

    // Assess: one completed result with the three real replies
    const output = await expectInvariants(fanin, id, { expectError: true });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { expected: 3, received: 3 } });
    expect((output.result as { body: unknown }[]).map((r) => r.body)).toEqual([
      { r: '0' },
      { r: '1' },
      { r: '2' },
    ]);
  });

  it('replies without a reply id, or with one outside the expected ids, never count: received never exceeds expected and missing lists what never came', async () => {
    // Kills the mutants "reply id falls back to the SQS message id" and "any reply id counts".
    // Prepare: a splitter aggregate of three items: reply ids "0", "1", "2"
    const id = nextId('split');
    await fanin.sendRequest({ definition: 'split', aggregateId: id, items: ['a', 'b', 'c'] });
    await fanin.drain();
    const base = { 'fanin-aggregate-id': id, 'fanin-definition': 'split' };

    // Act: a reply id outside 0..2, a reply with no reply id (twice, as a redistributed copy
    // would come), and two of the three real replies
    const outside = await fanin.sendReply({ bad: 'seven' }, { ...base, 'fanin-reply-id': '7' });
    const anonymous = [
      await fanin.sendReply({ bad: 'none' }, base),
      await fanin.sendReply({ bad: 'none' }, base),
    ];
    await fanin.sendReply({ ok: 0 }, { ...base, 'fanin-reply-id': '0' });
    await fanin.sendReply({ ok: 1 }, { ...base, 'fanin-reply-id': '1' });
    await fanin.drain();
    fanin.expectNoTerminalOutput(id);
    fanin.clock.advance(61_000);
    await fanin.sweep();
    await fanin.drain();

    // Assess: timed out with 2 of 3, "2" missing; the bad ones routed, not counted
    const output = await expectInvariants(fanin, id, { replyIds: ['0', '1'], expectError: true });
    expect(output).toMatchObject({ type: 'fanin.aggregate.timed-out', counts: { expected: 3, received: 2 } });
    expect(membersOf(output).sort()).toEqual(['0', '1']);
    expect((output.missing as { replyId: string }[]).map((m) => m.replyId)).toEqual(['2']);
    for (const messageId of [outside, ...anonymous]) {
      expect(routed(messageId).length, `message ${messageId} routed to an output`).toBeGreaterThan(0);
    }
  });

  it('a full set of replies plus ones without or outside reply ids completes with exactly the expected members', async () => {
    // Prepare
    const id = nextId('split');
    await fanin.sendRequest({ definition: 'split', aggregateId: id, items: ['a', 'b', 'c'] });
    await fanin.drain();
    const base = { 'fanin-aggregate-id': id, 'fanin-definition': 'split' };

    // Act: the bad ones first, so a fallback id would complete it early
    await fanin.sendReply({ bad: 1 }, base);
    await fanin.sendReply({ bad: 2 }, { ...base, 'fanin-reply-id': '3' });
    await fanin.sendReply({ bad: 3 }, { ...base, 'fanin-reply-id': '-1' });
    await fanin.drain();
    fanin.expectNoTerminalOutput(id);
    for (const r of ['0', '1', '2']) await fanin.sendReply({ ok: r }, { ...base, 'fanin-reply-id': r });
    await fanin.drain();

    // Assess
    const output = await expectInvariants(fanin, id, { replyIds: ['0', '1', '2'], expectError: true });
    expect(output).toMatchObject({ type: 'fanin.aggregate.completed', counts: { expected: 3, received: 3 } });
    expect(membersOf(output).sort()).toEqual(['0', '1', '2']);
  });

  it.each([7, 42])(
    'fuzzed correlation attributes (seed %i): nothing counts under another definition or aggregate, one terminal output each, nothing lost',
    async (seed) => {
      // Kills the mutants "reply judged by its own fanin-definition" and "fuzzed reply dropped silently".
      const random = mulberry32(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
      // Prepare: a few open aggregates of two definitions
      const aggregates = [
        { id: nextId(`fz${seed}`), definition: 'split', expected: 3 },
        { id: nextId(`fz${seed}`), definition: 'split', expected: 2 },
        { id: nextId(`fz${seed}`), definition: 'fzcount', expected: 3 },
      ];
      // Splitter aggregates: their reply ids are 0..N-1 by contract (a `none` fan-out's are the
      // requester's choice, so "outside the expected ids" would mean nothing there).
      for (const a of aggregates) {
        const items = Array.from({ length: a.expected }, (_, i) => i);
        await fanin.sendRequest({ definition: a.definition, aggregateId: a.id, items });
      }
      await fanin.drain();
      const long = 'x'.repeat(3000);
      const unicode = 'agg-\u00e9\u4e2d\u2603'; // BMP only: the emulator refuses what SQS calls invalid beyond it
      const definitions = [undefined, 'defA', 'defB', 'fzcount', 'split', 'nope', '', long, unicode];
      const ids = [undefined, ...aggregates.map((a) => a.id), 'not-an-aggregate', '', long, unicode];
      const replyIds = [undefined, '0', '1', '2', '3', '7', '-1', '', long, unicode];

      // Act: 40 fuzzed replies
      const fuzzed: { messageId: string; i: number; attributes: Record<string, string> }[] = [];
      for (let i = 0; i < 40; i += 1) {
        const attributes: Record<string, string> = {};
        const d = pick(definitions);
        const a = pick(ids);
        const r = pick(replyIds);
        if (d !== undefined) attributes['fanin-definition'] = d;
        if (a !== undefined) attributes['fanin-aggregate-id'] = a;
        if (r !== undefined) attributes['fanin-reply-id'] = r;
        try {
          fuzzed.push({ messageId: await fanin.sendReply({ fuzz: i }, attributes), i, attributes });
        } catch {
          // refused by SQS itself (e.g. an empty attribute value): never entered fanin
        }
      }
      await fanin.drain();
      // then every real reply, and the deadlines pass
      for (const a of aggregates) {
        for (let r = 0; r < a.expected; r += 1) {
          await fanin.sendReply(
            { real: r },
            { 'fanin-aggregate-id': a.id, 'fanin-reply-id': String(r), 'fanin-definition': a.definition },
          );
        }
      }
      await fanin.drain();
      fanin.clock.advance(3_601_000);
      await fanin.sweep();
      await fanin.drain();

      // Assess
      const results = new Map<string, OutputBody>();
      for (const a of aggregates) {
        const { output } = fanin.expectExactlyOneTerminalOutput(a.id, 'strict');
        results.set(a.id, output);
        const members = membersOf(output);
        expect(members.length, `${a.id} received more than expected`).toBeLessThanOrEqual(a.expected);
        const outside = members.filter((m) => !(/^\d+$/.test(m) && Number(m) < a.expected));
        expect(outside, `${a.id} counted reply ids outside 0..${a.expected - 1}`).toEqual([]);
        for (const entry of output.result as { replyId: string; body: { fuzz?: number } }[]) {
          if (entry.body?.fuzz === undefined) continue;
          const origin = fuzzed.find((f) => f.i === entry.body.fuzz);
          const named = origin?.attributes['fanin-definition'];
          expect(
            named === undefined || named === a.definition,
            `fuzz ${entry.body.fuzz} counted under ${a.definition}`,
          ).toBe(true);
          expect(origin?.attributes['fanin-aggregate-id']).toBe(a.id);
        }
      }
      for (const f of fuzzed) {
        const counted = [...results.values()].some((o) =>
          (o.result as { body: { fuzz?: number } }[]).some((e) => e.body?.fuzz === f.i),
        );
        const target = aggregates.find((a) => a.id === f.attributes['fanin-aggregate-id']);
        const named = f.attributes['fanin-definition'];
        // A duplicate of a reply id that counted (same aggregate, same reply id, no other definition) changes nothing.
        const duplicate =
          target !== undefined &&
          (named === undefined || named === target.definition) &&
          membersOf(results.get(target.id) as OutputBody).includes(
            f.attributes['fanin-reply-id'] ?? '\u0000',
          );
        expect(
          counted || duplicate || routed(f.messageId).length > 0,
          `fuzzed message ${f.i} ${JSON.stringify(f.attributes).slice(0, 200)} was lost`,
        ).toBe(true);
      }
      expect(await fanin.deadLetters()).toEqual({});
    },
    120_000,
  );
});
