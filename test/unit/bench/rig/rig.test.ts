/**
 * The rig's own decisions: which queue a metered SQS call is counted against (the report's calls by
 * queue come from it), and when a reply batching setting is already in force (no redeploy).
 */
import { describe, expect, it } from 'vitest';
import { batchingInForce, queueLabeller } from '../../../../bench/rig/rig.ts';
import type { ConsumerSpec } from '../../../../shared/topology/topology.ts';

describe('the rig', () => {
  const provisioned = {
    queueUrls: {
      ingress: 'http://q/ingress',
      timer: 'http://q/timer',
      completed: 'http://q/completed.fifo',
      'timed-out': 'http://q/timed-out.fifo',
      late: 'http://q/late.fifo',
      error: 'http://q/error.fifo',
      backlog: 'http://q/backlog',
    },
    replyQueueUrls: ['http://q/reply-0', 'http://q/reply-1'],
  };

  it("counts every output role's queue as output, each reply partition as reply and the target as target", () => {
    const label = queueLabeller(provisioned, 'http://q/responders');
    expect(
      ['completed.fifo', 'timed-out.fifo', 'late.fifo', 'error.fifo'].map((q) => label(`http://q/${q}`)),
    ).toEqual(['output', 'output', 'output', 'output']);
    expect(label('http://q/reply-0')).toBe('reply');
    expect(label('http://q/reply-1')).toBe('reply');
    expect(label('http://q/responders')).toBe('target');
  });

  it('counts any other provisioned queue under its role, and a URL it never provisioned as other', () => {
    const label = queueLabeller(provisioned);
    expect(label('http://q/ingress')).toBe('ingress');
    expect(label('http://q/timer')).toBe('timer');
    expect(label('http://q/backlog')).toBe('backlog');
    expect(label('http://q/responders')).toBe('other');
  });

  const consumer = (c: Partial<ConsumerSpec>): ConsumerSpec => ({
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    maxConcurrency: 5,
    ...c,
  });

  it('keeps its reply consumers when every partition already takes the setting, an absent interval read as none', () => {
    const consumers = [consumer({}), consumer({ drainIntervalSeconds: 0 })];
    expect(batchingInForce(consumers, { windowSeconds: 0, batchSize: 10 })).toBe(true);
    expect(batchingInForce(consumers, { windowSeconds: 0, batchSize: 10, drainIntervalSeconds: 0 })).toBe(
      true,
    );
  });

  it('redeploys when one partition differs in window, batch size or drain interval', () => {
    const today = [consumer({}), consumer({})];
    expect(batchingInForce(today, { windowSeconds: 1, batchSize: 10 })).toBe(false);
    expect(batchingInForce(today, { windowSeconds: 0, batchSize: 100 })).toBe(false);
    expect(batchingInForce(today, { windowSeconds: 0, batchSize: 10, drainIntervalSeconds: 60 })).toBe(false);
    const mixed = [consumer({ batchSize: 1_000, drainIntervalSeconds: 60 }), consumer({})];
    expect(batchingInForce(mixed, { windowSeconds: 0, batchSize: 1_000, drainIntervalSeconds: 60 })).toBe(
      false,
    );
  });
});
