import { describe, expect, it } from 'vitest';
import { AggregateStatus } from '../../shared/engine/constants.ts';
import type { RawMessage } from '../../shared/ports.ts';
import { handleRequest, openingRequestId } from '../../shared/use-cases/fan-out.ts';
import { memoryContext } from '../support/memory-store.ts';
import { aDefinition } from './shared/engine/factories.ts';

/**
 * A retry is recognised by the identity its aggregate's header keeps: the request id and a
 * digest of the request's plan. Headers written before the digest was kept hold the bare
 * request id; a retry of such a request still resumes it.
 */

const SPLIT = aDefinition({
  name: 'split',
  fanOut: { type: 'splitter', itemsPath: '$.items', target: 'worker' },
  completion: { strategy: 'all' },
});

function aRequest(body: unknown): RawMessage {
  return { messageId: `m-${Math.random()}`, body: JSON.stringify(body), attributes: {}, receiveCount: 1 };
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
