import { describe, expect, it } from 'vitest';
import { CorrelationError, OutputChannelError } from '../../../../shared/errors.ts';
import { type OutputMessage, type RawMessage, SILENT_LOG } from '../../../../shared/ports.ts';
import type { FaninContext } from '../../../../shared/use-cases/context.ts';
import { routeIfUnfixable } from '../../../../shared/use-cases/error-output.ts';

/**
 * A use case's error routing: input no retry can fix goes to the error output once, anything else
 * is thrown back for the queue to redeliver.
 */
describe('routeIfUnfixable', () => {
  const raw: RawMessage = { messageId: 'm-1', body: '{"x":1}', attributes: { a: 'b' }, receiveCount: 1 };

  function fakeContext() {
    const published: { role: string; message: OutputMessage }[] = [];
    const ctx = {
      outputs: {
        publish: async (role: string, message: OutputMessage) => void published.push({ role, message }),
      },
      clock: () => 1_000,
      log: SILENT_LOG,
    } as unknown as FaninContext;
    return { ctx, published };
  }

  it('routes bad input to the error output with its message as the reason', async () => {
    // Prepare
    const { ctx, published } = fakeContext();
    // Act
    await routeIfUnfixable(ctx, 'control', raw, new CorrelationError('no usable aggregate id'));
    // Assess
    expect(published).toEqual([
      {
        role: 'error',
        message: {
          id: 'error/control/m-1',
          type: 'fanin.error',
          source: 'control',
          reason: 'no usable aggregate id',
          at: 1_000,
          message: { messageId: 'm-1', body: '{"x":1}', attributes: { a: 'b' } },
        },
      },
    ]);
  });

  it.each([
    ['a retryable fanin error', new OutputChannelError('queue', [])],
    ['an error from outside the family', new Error('ECONNRESET')],
  ])('throws %s on, routing nothing', async (_, error) => {
    // Prepare
    const { ctx, published } = fakeContext();
    // Act / Assess (mutant killed: every error routed, so a transient failure loses its message)
    await expect(routeIfUnfixable(ctx, 'reply', raw, error)).rejects.toBe(error);
    expect(published).toEqual([]);
  });
});
