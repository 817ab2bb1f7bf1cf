import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A field beyond its bound (shared/engine/limits.ts, docs/wire-contract.md#limits) is bad input:
 * the message goes to the error output with the reason, never cycles into a dead-letter queue.
 */
describe('message bounds, end to end', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      {
        name: 'split',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'limits-nowhere' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
      },
    ]);
  });
  afterAll(() => fanin.stop());

  /** JSON text of arrays nested `depth` deep (200 KB at 100,000: within one SQS message). */
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

  it('a request whose items nest 100,000 deep goes to the error output with the reason, not the DLQ', async () => {
    // Act
    await fanin.sendRequest(`{"definition":"split","aggregateId":"deep-1","items":[${nested(100_000)}]}`);
    await fanin.drain();

    // Assess (mutant killed: nesting unbounded — encoding the sub-request overflows the stack)
    const errors = (await fanin.outputs('error')).filter((e) => e.source === 'ingress');
    expect(errors.map((e) => e.reason)).toEqual(['body nests deeper than 64 levels of arrays and objects']);
    expect(await fanin.ctx.store.getHeader('deep-1')).toBeUndefined();
    expect(await fanin.deadLetters()).toEqual({});
  });

  it('a reply whose body nests 100,000 deep goes to the error output with the reason and the aggregate goes on', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'deep-2', expected: 1 });
    await fanin.drain();

    // Act
    await fanin.sendReply(nested(100_000), {
      'fanin-aggregate-id': 'deep-2',
      'fanin-reply-id': '0',
    });
    await fanin.drain();
    await fanin.sendReply({ fine: true }, { 'fanin-aggregate-id': 'deep-2', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const errors = (await fanin.outputs('error')).filter((e) => e.source === 'reply');
    expect(errors.map((e) => e.reason)).toEqual(['body nests deeper than 64 levels of arrays and objects']);
    const { output } = fanin.expectExactlyOneTerminalOutput('deep-2');
    expect(output).toMatchObject({ result: [{ replyId: '0', body: { fine: true } }] });
    expect(await fanin.deadLetters()).toEqual({});
  });

  it('a reply carrying a fanin-origin-message-id of 300,000 characters goes to the error output and the aggregate goes on', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'origin-1', expected: 1 });
    await fanin.drain();

    // Act: the origin id is kept on every item of the reply; ten in a pack would pass 400 KB
    await fanin.sendReply(
      { big: true },
      {
        'fanin-aggregate-id': 'origin-1',
        'fanin-reply-id': '0',
        'fanin-origin-message-id': 'm'.repeat(300_000),
      },
    );
    await fanin.drain();
    await fanin.sendReply({ fine: true }, { 'fanin-aggregate-id': 'origin-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess (mutant killed: the origin id unbounded)
    const errors = (await fanin.outputs('error')).filter((e) => e.source === 'reply');
    expect(errors.map((e) => e.reason)).toEqual([
      'fanin-origin-message-id is 300000 characters, more than the 256 allowed',
    ]);
    const { output } = fanin.expectExactlyOneTerminalOutput('origin-1');
    expect(output).toMatchObject({ result: [{ replyId: '0', body: { fine: true } }] });
    expect(await fanin.deadLetters()).toEqual({});
  });
});
