import { describe, expect, it } from 'vitest';
import type { RawMessage } from '../../shared/ports.ts';
import { handleRequest } from '../../shared/use-cases/fan-out.ts';
import { memoryContext } from '../support/memory-store.ts';
import { aDefinition } from './shared/engine/factories.ts';

/**
 * A retry of a request with another plan is refused, and its reason says what differs
 * (docs/wire-contract.md, Requests: "it goes to the error output with what differs"), for the
 * parts the header keeps only a digest of: the sub-requests' targets, their bodies, the kept body.
 */

const LIST = aDefinition({
  name: 'list',
  fanOut: { type: 'recipient-list' },
  completion: { strategy: 'all' },
});
const SPLIT = aDefinition({
  name: 'split',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'all' },
});

function aRequest(body: unknown, attributes: Record<string, string> = {}): RawMessage {
  return { messageId: `m-${Math.random()}`, body: JSON.stringify(body), attributes, receiveCount: 1 };
}

async function refusalOfRetry(
  first: unknown,
  retry: unknown,
  attributes: readonly [Record<string, string>, Record<string, string>] = [{}, {}],
): Promise<string[]> {
  const { ctx, ports } = memoryContext([LIST, SPLIT]);
  await handleRequest(ctx, aRequest(first, attributes[0]));
  expect(ports.outputs.to('error')).toEqual([]);
  await handleRequest(ctx, aRequest(retry, attributes[1]));
  return ports.outputs.to('error').map((e) => String(e.reason));
}

describe('the reason of a retry with another plan names what differs', () => {
  const request = {
    definition: 'list',
    aggregateId: 'rr-1',
    requestId: 'r-1',
    recipients: ['bank-a', 'bank-b'],
  };

  it('another payload to the same recipients (mutant retry-reason-bodies)', async () => {
    const reasons = await refusalOfRetry(
      { ...request, payload: { amount: 1 } },
      { ...request, payload: { amount: 2 } },
    );
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain(
      'retried with another plan than the one that opened aggregate "rr-1" (another payload)',
    );
  });

  it('the same payload to other recipients (mutant retry-reason-targets)', async () => {
    const reasons = await refusalOfRetry(
      { ...request, payload: { amount: 1 } },
      { ...request, recipients: ['bank-a', 'bank-c'], payload: { amount: 1 } },
    );
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain('(other recipients)');
  });

  it('more recipients: said once, as the expected count the fan-out sets (not again as a count of recipients)', async () => {
    const reasons = await refusalOfRetry(
      { ...request, payload: { amount: 1 } },
      { ...request, recipients: ['bank-a', 'bank-b', 'bank-c'], payload: { amount: 1 } },
    );
    expect(reasons[0]).toContain('(expected 3, not 2)');
    expect(reasons[0]).not.toContain('recipients, not');
  });

  it('a splitter request with other items', async () => {
    const split = { definition: 'split', aggregateId: 'rr-2', requestId: 'r-2' };
    const reasons = await refusalOfRetry(
      { ...split, items: [{ a: 1 }, { a: 2 }] },
      { ...split, items: [{ a: 9 }, { a: 8 }] },
    );
    expect(reasons[0]).toContain('(other sub-request bodies (items))');
  });

  it('a retry that repeats the request, keys in another order, is no refusal', async () => {
    const reasons = await refusalOfRetry(
      { ...request, payload: { amount: 1, term: 2 } },
      { payload: { term: 2, amount: 1 }, ...request },
    );
    expect(reasons).toEqual([]);
  });

  it('another request id with the very same plan is another request, not a retry (mutant retry-resumes-by-request-id-and-digest)', async () => {
    // The request ids as attributes: the bodies (kept by the definition) are the same.
    const { requestId: _, ...body } = request;
    const reasons = await refusalOfRetry(
      { ...body, payload: { amount: 1 } },
      { ...body, payload: { amount: 1 } },
      [{ 'fanin-request-id': 'r-1' }, { 'fanin-request-id': 'r-other' }],
    );
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toContain('aggregate id "rr-1" is already in use by another request');
  });
});
