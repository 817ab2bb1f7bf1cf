import type { Message } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SentMessage } from '../../support/aws-probe.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Cancellation notices (`cancelOutstanding`, docs/data-plane.md "Cancellation"): when an aggregate
 * ends, each recipient that was sent a sub-request and has not replied gets one notice on the
 * queue its sub-request went to, after the terminal output; a completer that crashes between the
 * two sends them when it is resumed. Observed on the responder queues as sent (the probe records
 * every SendMessageBatch entry, below any FIFO deduplication), and ordered against the terminal
 * output by the probe's sequence numbers.
 */
describe('cancellation notices', () => {
  let fanin: FaninUnderTest;
  const pickers = `pickers-${Date.now().toString(36)}`;
  const recipientList = { type: 'recipient-list' } as const;
  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'quotes', fanOut: recipientList, completion: { strategy: 'first' }, cancelOutstanding: true },
      { name: 'quotes-plain', fanOut: recipientList, completion: { strategy: 'first' } },
      {
        name: 'picks',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: pickers },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
        cancelOutstanding: true,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  let n = 0;
  /** Three responder queues of their own for one test. */
  const queues = async (): Promise<string[]> => {
    n += 1;
    return Promise.all(['a', 'b', 'c'].map((q) => fanin.targetQueue(`r${n}${q}`)));
  };
  const attributesOf = (m: SentMessage) =>
    Object.fromEntries(Object.entries(m.attributes).map(([k, v]) => [k, v.StringValue]));
  /** Every notice the system sent for this aggregate, as sent (raw, duplicates kept). */
  const notices = (id: string) =>
    fanin.probe.sent.filter(
      (m) =>
        m.bySystem &&
        m.role.startsWith('target:') &&
        m.attributes['fanin-aggregate-id']?.StringValue === id &&
        m.attributes['fanin-cancelled'] !== undefined,
    );
  const noticeTargets = (id: string) =>
    notices(id)
      .map((m) => `${m.role.slice('target:'.length)}#${m.attributes['fanin-reply-id']?.StringValue}`)
      .sort();
  const terminalSeq = (id: string): number => {
    const seqs = fanin.probe.published.filter((p) => p.body.id === `${id}/result`).map((p) => p.seq);
    expect(seqs.length, 'the terminal output was published').toBeGreaterThan(0);
    return Math.min(...seqs);
  };
  const take = async (names: readonly string[]): Promise<Message[][]> =>
    Promise.all(names.map((q) => fanin.takeRequests(q)));

  const openQuotes = async (definition: string, prefix: string) => {
    const names = await queues();
    const id = `${prefix}-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition, aggregateId: id, recipients: names, payload: { amount: 1 } });
    await fanin.drain();
    const [a, b, c] = await take(names);
    return { id, names, subRequests: [a?.[0], b?.[0], c?.[0]] as Message[] };
  };

  it('an early first completion notifies the other recipients, after its result, and never the one that replied', async () => {
    const { id, names, subRequests } = await openQuotes('quotes', 'first');
    await fanin.reply(subRequests[1] as Message, { rate: 3.1 });
    await fanin.drain();
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output.completedBy).toBe('first');
    const [a, , c] = names.map((q) => q.slice(fanin.topology.prefix.length + 1));
    expect(noticeTargets(id)).toEqual([`${a}#0`, `${c}#2`]);
    expect(
      notices(id).every((m) => m.seq > terminalSeq(id)),
      'each notice after the terminal output',
    ).toBe(true);
    const first = notices(id).find((m) => m.role === `target:${a}`) as SentMessage;
    expect(attributesOf(first)).toEqual({
      'fanin-aggregate-id': id,
      'fanin-reply-id': '0',
      'fanin-definition': 'quotes',
      'fanin-cancelled': 'completed',
      'fanin-completed-by': 'first',
    });
    expect(JSON.parse(first.body)).toEqual({
      type: 'fanin.cancellation',
      aggregateId: id,
      replyId: '0',
      definition: 'quotes',
      outcome: 'completed',
      completedBy: 'first',
    });
    // and a responder finds it on its queue, after its sub-request
    const [onA, onB, onC] = await take(names);
    expect(onA?.map((m) => m.MessageAttributes?.['fanin-cancelled']?.StringValue)).toEqual(['completed']);
    expect(onB).toEqual([]);
    expect(onC).toHaveLength(1);
  });

  it('a definition without the option sends no notice and makes no call for it: the same completion costs exactly one send per notified queue less', async () => {
    const measure = async (definition: string, prefix: string) => {
      const { id, subRequests } = await openQuotes(definition, prefix);
      await fanin.reply(subRequests[1] as Message, { rate: 3.1 });
      const from = fanin.probe.calls.length;
      await fanin.drain();
      fanin.expectExactlyOneTerminalOutput(id);
      const calls = fanin.probe.calls
        .slice(from)
        .filter((c) => c.system && c.name !== 'SQS.ReceiveMessage')
        .map((c) => `${c.name}${c.queueRole?.startsWith('target:') ? ' target' : ''}`);
      const counts: Record<string, number> = {};
      for (const c of calls) counts[c] = (counts[c] ?? 0) + 1;
      return { id, counts };
    };
    const plain = await measure('quotes-plain', 'plain');
    const cancelling = await measure('quotes', 'cancelling');
    expect(notices(plain.id)).toEqual([]);
    expect(plain.counts['SQS.SendMessageBatch target'], 'no send to a responder queue').toBeUndefined();
    expect(plain.counts['SQS.GetQueueUrl target']).toBeUndefined();
    // the two recipients that did not reply, each on its own queue: one batch each, nothing else
    expect(cancelling.counts).toEqual({ ...plain.counts, 'SQS.SendMessageBatch target': 2 });
  });

  it('a timeout notifies the silent recipients, not the one that replied', async () => {
    const target = await fanin.targetQueue(pickers, true);
    const id = `timeout-${Date.now().toString(36)}`;
    await fanin.sendRequest({ definition: 'picks', aggregateId: id, items: [1, 2, 3, 4] });
    await fanin.drain();
    const sent = (await fanin.takeRequests(target)).sort((x, y) =>
      String(x.MessageAttributes?.['fanin-reply-id']?.StringValue).localeCompare(
        String(y.MessageAttributes?.['fanin-reply-id']?.StringValue),
      ),
    );
    expect(sent).toHaveLength(4);
    await fanin.reply(sent[1] as Message, { ok: true });
    await fanin.drain();
    fanin.clock.advance(61_000);
    await fanin.sweep();
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output.outcome).toBe('timed-out');
    expect(noticeTargets(id)).toEqual([`${pickers}#0`, `${pickers}#2`, `${pickers}#3`]);
    expect(notices(id).every((m) => m.seq > terminalSeq(id))).toBe(true);
    expect(notices(id).map((m) => attributesOf(m)['fanin-cancelled'])).toEqual([
      'timed-out',
      'timed-out',
      'timed-out',
    ]);
    expect(notices(id).map((m) => attributesOf(m)['fanin-completed-by'])).toEqual([
      'deadline',
      'deadline',
      'deadline',
    ]);
  });

  it('a failed reply counts as a reply: an aggregate that fails on it notifies only the others', async () => {
    const { id, names, subRequests } = await openQuotes('quotes', 'failed');
    const failing = subRequests[0] as Message;
    const attributes: Record<string, string> = { 'fanin-failure': 'bank closed' };
    for (const [k, v] of Object.entries(failing.MessageAttributes ?? {}))
      if (k.startsWith('fanin-') && v.StringValue) attributes[k] = v.StringValue;
    await fanin.sendReply({ error: true }, attributes);
    await fanin.drain();
    const { output } = fanin.expectExactlyOneTerminalOutput(id);
    expect(output.outcome).toBe('failed');
    const [, b, c] = names.map((q) => q.slice(fanin.topology.prefix.length + 1));
    expect(noticeTargets(id)).toEqual([`${b}#1`, `${c}#2`]);
    expect(notices(id).map((m) => attributesOf(m)['fanin-cancelled'])).toEqual(['failed', 'failed']);
  });

  it('a purge notifies every recipient asked, after the purged notice', async () => {
    const { id, names } = await openQuotes('quotes', 'purge');
    await fanin.sendControl({ command: 'purge', aggregateId: id });
    await fanin.drain();
    fanin.expectExactlyOneTerminalOutput(id);
    const [a, b, c] = names.map((q) => q.slice(fanin.topology.prefix.length + 1));
    expect(noticeTargets(id)).toEqual([`${a}#0`, `${b}#1`, `${c}#2`]);
    expect(notices(id).every((m) => m.seq > terminalSeq(id))).toBe(true);
    expect(new Set(notices(id).map((m) => attributesOf(m)['fanin-cancelled']))).toEqual(new Set(['purged']));
    expect(new Set(notices(id).map((m) => attributesOf(m)['fanin-completed-by']))).toEqual(
      new Set(['purge']),
    );
  });

  const resumeThrice = async (): Promise<void> => {
    for (let i = 0; i < 3; i += 1) {
      fanin.clock.advance(300_000);
      await fanin.sweep().catch(() => undefined);
    }
  };

  it('a crash between the terminal output and the notices: they are sent, once each, when the completion is resumed', async () => {
    const { id, names, subRequests } = await openQuotes('quotes', 'crash');
    await fanin.reply(subRequests[2] as Message, { rate: 2.9 });
    fanin.probe.crashAt(
      { name: 'SQS.SendMessageBatch', where: (c) => c.queueRole?.startsWith('target:') === true },
      'before',
    );
    // The reply's message comes back after its visibility timeout (the harness moves the clock
    // past the completer's lease): its handler finds the aggregate completing and resumes it.
    await fanin.drain().catch(() => undefined);
    const crashed = fanin.probe.disarm();
    expect(crashed, 'the notices were crashed before they were sent').toBeDefined();
    await resumeThrice();
    const results = fanin.probe.published.filter((p) => p.body.id === `${id}/result`).map((p) => p.seq);
    expect(results[0], 'the result went out before the crash').toBeLessThan(crashed?.seq ?? 0);
    // the resumer published the same result again (same id and content), then the notices
    expect(fanin.expectExactlyOneTerminalOutput(id, 'content').publications).toBe(2);
    const [a, b] = names.map((q) => q.slice(fanin.topology.prefix.length + 1));
    expect(noticeTargets(id)).toEqual([`${a}#0`, `${b}#1`]);
    expect(notices(id).every((m) => m.seq > Math.max(...results))).toBe(true);
    expect((await fanin.ctx.store.getHeader(id))?.status).toBe('closed');
  });

  it('a crash right after the notices were sent sends them again once, with the same attributes and deduplication id', async () => {
    const { id, subRequests } = await openQuotes('quotes', 'resent');
    await fanin.reply(subRequests[0] as Message, { rate: 2.9 });
    const sends = () =>
      fanin.probe.calls.filter(
        (c) => c.system && c.name === 'SQS.SendMessageBatch' && c.queueRole?.startsWith('target:') === true,
      );
    const before = sends().length;
    fanin.probe.crashAt(
      { name: 'SQS.SendMessageBatch', where: (c) => c.queueRole?.startsWith('target:') === true },
      'after',
    );
    await fanin.drain().catch(() => undefined);
    expect(fanin.probe.disarm()).toBeDefined();
    await resumeThrice();
    await fanin.drain();
    // the documented repeat: a notice sent, then the crash, then the resumer's copy
    const byReply = new Map<string, Record<string, string | undefined>[]>();
    for (const m of notices(id)) {
      const replyId = String(m.attributes['fanin-reply-id']?.StringValue);
      byReply.set(replyId, [...(byReply.get(replyId) ?? []), attributesOf(m)]);
    }
    // reply 1's batch went out before the crash and again from the resumer; reply 2's only once
    expect(Object.fromEntries([...byReply].map(([k, v]) => [k, v.length]))).toEqual({ '1': 2, '2': 1 });
    for (const copies of byReply.values()) {
      expect(copies.every((c) => JSON.stringify(c) === JSON.stringify(copies[0]))).toBe(true);
    }
    // the entries of every attempt carry the same deduplication id per reply id (a FIFO target keeps one)
    const dedup = new Map<string, Set<unknown>>();
    for (const call of sends().slice(before)) {
      for (const entry of (call.input.Entries as Record<string, unknown>[]) ?? []) {
        const attributes = entry.MessageAttributes as Record<string, { StringValue?: string }>;
        const replyId = String(attributes['fanin-reply-id']?.StringValue);
        dedup.set(replyId, (dedup.get(replyId) ?? new Set()).add(entry.MessageDeduplicationId ?? 'standard'));
      }
    }
    for (const ids of dedup.values()) expect(ids.size).toBe(1);
  });
});
