/**
 * What the rig learns of the replies its consumers took: a drain's batches seen through fanin's SQS client
 * (a delete closes a batch), which drains took each aggregate's replies, when they were sent, and when the
 * drain schedule falls. The client's middleware stack is a stand-in; the SQS answers are the test's.
 */
import type { Message, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { DrainBatches } from '../../../../bench/rig/drain-batches.ts';

type Args = { input: Record<string, unknown> };
type Handler = (args: Args) => Promise<{ output: unknown }>;
type Middleware = (next: Handler, context: { commandName?: string }) => Handler;

function instrumented() {
  const drains = new DrainBatches();
  let middleware: Middleware | undefined;
  drains.instrument({
    middlewareStack: { add: (m: Middleware) => (middleware = m) },
  } as unknown as SQSClient);
  const asked: Record<string, unknown>[] = [];
  const call = async (operation: string, input: Record<string, unknown>, messages: Message[] = []) => {
    if (!middleware) throw new Error('not instrumented');
    const terminal: Handler = async (args) => {
      asked.push(args.input);
      return { output: { Messages: messages } };
    };
    await middleware(terminal, { commandName: `${operation}Command` })({ input });
  };
  return { drains, call, asked };
}

const reply = (id: string, aggregateId: string, sent: number): Message => ({
  MessageId: id,
  MessageAttributes: { 'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId } },
  Attributes: { SentTimestamp: String(sent) },
});

describe("the rig's drain batches", () => {
  it("splits a drain's receives into batches at each delete, and asks for the replies' send times", async () => {
    const { drains, call, asked } = instrumented();
    drains.begin('q0');
    await call('ReceiveMessage', { QueueUrl: 'q0' }, [reply('m1', 'a', 1_000), reply('m2', 'b', 1_100)]);
    await call('ReceiveMessage', { QueueUrl: 'q0' }, [reply('m3', 'a', 1_200)]);
    await call('DeleteMessageBatch', { QueueUrl: 'q0' });
    await call('ReceiveMessage', { QueueUrl: 'q0' }, [reply('m4', 'c', 1_300)]);
    const batches = drains.end('q0');
    expect(batches.map((b) => b.map((m) => m.messageId))).toEqual([['m1', 'm2', 'm3'], ['m4']]);
    expect(batches[0]?.[0]).toEqual({ messageId: 'm1', aggregateId: 'a', sentAt: 1_000 });
    expect(asked[0]?.MessageSystemAttributeNames).toEqual(['SentTimestamp']);
  });

  it('leaves calls on queues with no drain in progress, and a receive that asks for all attributes, as they were', async () => {
    const { drains, call, asked } = instrumented();
    await call('ReceiveMessage', { QueueUrl: 'other' });
    drains.begin('q0');
    await call('ReceiveMessage', { QueueUrl: 'q0', MessageSystemAttributeNames: ['All'] });
    expect(asked).toEqual([{ QueueUrl: 'other' }, { QueueUrl: 'q0', MessageSystemAttributeNames: ['All'] }]);
    expect(drains.end('never-begun')).toEqual([]);
  });

  it('counts the aggregates whose replies more than one drain took, and spans their replies first to last', async () => {
    const { drains, call } = instrumented();
    drains.begin('q0', 10);
    await call('ReceiveMessage', { QueueUrl: 'q0' }, [reply('m1', 'a', 1_000), reply('m2', 'b', 1_050)]);
    drains.end('q0');
    drains.begin('q0', 20);
    await call('ReceiveMessage', { QueueUrl: 'q0' }, [reply('m3', 'a', 1_400)]);
    drains.end('q0');
    // An event source's reply of `b`, sent before those drained.
    drains.noteSent('b', 900);
    drains.noteSent('b', Number.NaN);
    expect(drains.splitAcrossDrains(['a', 'b', 'unknown'])).toBe(1);
    expect(drains.replySpansMs(['a', 'b', 'unknown'])).toEqual([400, 150]);
    expect(drains.startsBetween(15, 30)).toEqual([20]);
  });

  it('finds the next drain one whole interval after the schedule started, none without a schedule', () => {
    const drains = new DrainBatches();
    expect(drains.nextDrainAt(5_000)).toBeUndefined();
    drains.scheduled(60, 1_000);
    expect(drains.nextDrainAt(0)).toBe(61_000);
    expect(drains.nextDrainAt(30_000)).toBe(61_000);
    expect(drains.nextDrainAt(61_000)).toBe(121_000);
    drains.scheduled(0, 1_000);
    expect(drains.nextDrainAt(30_000)).toBeUndefined();
  });
});
