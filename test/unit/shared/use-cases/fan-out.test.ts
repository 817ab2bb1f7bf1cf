import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../../../shared/engine/constants.ts';
import { WireAttribute } from '../../../../shared/engine/correlation.ts';
import type { RawMessage } from '../../../../shared/ports.ts';
import { handleRequest, openingRequestId } from '../../../../shared/use-cases/fan-out.ts';
import { memoryContext } from '../../../support/memory-store.ts';
import { aDefinition } from '../engine/factories.ts';

/**
 * A retry is recognised by the identity its aggregate's header keeps: the request id and a
 * digest of the request's plan. Headers written before the digest was kept hold the bare
 * request id; a retry of such a request still resumes it.
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

describe('a request resuming its aggregate', () => {
  it('a retry of a request whose header holds the bare request id resumes it and sends its sub-requests', async () => {
    // Prepare: an aggregate as a header written before digests were kept
    const { ctx, ports } = memoryContext([SPLIT]);
    await ports.store.openAggregate({
      aggregateId: 'old-1',
      definition: 'split',
      status: AggregateStatus.OPEN,
      expected: 2,
      received: 0,
      lateCount: 0,
      openedAt: 1_000_000,
      params: {},
      requestId: 'r-old',
    });

    // Act
    await handleRequest(
      ctx,
      aRequest({ definition: 'split', aggregateId: 'old-1', requestId: 'r-old', items: [1, 2] }),
    );

    // Assess (mutant killed: only a header with the digest recognised)
    expect(ports.outputs.to('error')).toEqual([]);
    expect(ports.sender.sent.map((s) => s.attributes['fanin-reply-id'])).toEqual(['0', '1']);
  });

  it('the header of a new aggregate names its request id, read back without the digest', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([SPLIT]);

    // Act
    await handleRequest(
      ctx,
      aRequest({ definition: 'split', aggregateId: 'new-1', requestId: 'r-new', items: [1] }),
    );

    // Assess
    const header = await ports.store.getHeader('new-1');
    // The request id, the whole plan's digest, then a short digest of each part (count, targets,
    // bodies, kept body) that a refused retry's reason names.
    expect(header?.requestId?.split('\u0000')).toEqual([
      'r-new',
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^1\.[0-9a-f]{16}\.[0-9a-f]{16}\.-$/),
    ]);
    expect(openingRequestId(header)).toBe('r-new');
  });
});

/**
 * A retry of a request with another plan is refused, and its reason says what differs
 * (docs/wire-contract.md, Requests: "it goes to the error output with what differs"), for the
 * parts the header keeps only a digest of: the sub-requests' targets, their bodies, the kept body.
 */

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

/** A request id is what the limits table says (docs/wire-contract.md, Limits). */

const PLAIN = aDefinition({ name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' } });

describe('a request id is a string of 1-256 characters', () => {
  it.each([
    ['empty (mutant request-id-empty-fallback)', '', 'requestId is empty'],
    [
      'a number (mutant request-id-number)',
      12,
      'requestId must be a string of 1-256 characters (received a number: 12)',
    ],
    ['null', null, 'requestId must be a string of 1-256 characters (received null)'],
  ])(
    'a requestId that is %s is refused to the error output and opens nothing',
    async (_, requestId, reason) => {
      // Prepare
      const { ctx, ports } = memoryContext([PLAIN]);

      // Act
      await handleRequest(
        ctx,
        aRequest({ definition: 'plain', aggregateId: 'rid-x', requestId, expected: 1 }),
      );

      // Assess
      expect(ports.outputs.to('error').map((e) => e.reason)).toEqual([reason]);
      expect(await ports.store.getHeader('rid-x')).toBeUndefined();
    },
  );

  it('a request id in the attribute, as the client sends it, opens its aggregate under that id', async () => {
    // Prepare
    const { ctx, ports } = memoryContext([PLAIN]);

    // Act
    await handleRequest(
      ctx,
      aRequest(
        { definition: 'plain', aggregateId: 'rid-y', expected: 1 },
        { [WireAttribute.REQUEST_ID]: '12' },
      ),
    );

    // Assess
    expect(ports.outputs.to('error')).toEqual([]);
    expect(openingRequestId(await ports.store.getHeader('rid-y'))).toBe('12');
  });
});
