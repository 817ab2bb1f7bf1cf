import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { instrumented, makeSweeperHandler } from '../../../functions/handlers.ts';
import { PowertoolsMetricsAdapter } from '../../../shared/adapters/powertools-metrics.ts';
import { OutputTooLargeError } from '../../../shared/errors.ts';
import {
  METRICS_NAMESPACE,
  MetricDimension,
  MetricName,
  UNKNOWN_DEFINITION,
} from '../../../shared/observability/metric-names.ts';
import type { OutputPublisher } from '../../../shared/ports.ts';
import { handleReplies } from '../../../shared/use-cases/replies.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/** One EMF line as Powertools Metrics wrote it to standard output. */
interface EmfLine {
  readonly namespace: string;
  /** The dimension sets, e.g. `[['service', 'definition'], ['service']]`. */
  readonly dimensionSets: string[][];
  readonly units: Record<string, string>;
  readonly record: Record<string, unknown>;
}

/**
 * The metrics of a real fanin (handlers against the emulators) through the real Powertools
 * adapter: every EMF line it writes to standard output is captured and read back as CloudWatch
 * would, so the test pins the names, the `definition` dimension, the units and the values.
 */
describe('metrics (Powertools EMF)', () => {
  let fanin: FaninUnderTest;
  let metrics: PowertoolsMetricsAdapter;
  let lines: EmfLine[] = [];
  const SERVICE = 'fanin-metrics-test';

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
      { name: 'short', fanOut: { type: 'none' }, completion: { strategy: 'timeout' }, timeoutSeconds: 1 },
      {
        name: 'broken',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        aggregation: { algorithm: 'custom', expression: '$error("boom")' },
      },
    ]);
    metrics = new PowertoolsMetricsAdapter({
      definitions: fanin.topology.definitions.keys(),
      serviceName: SERVICE,
    });
    fanin.buildContext({ metrics });
  });
  afterAll(() => fanin.stop());

  beforeEach(() => {
    lines = [];
    const write = process.stdout.write.bind(process.stdout) as (...args: unknown[]) => boolean;
    // Powertools writes each EMF line to standard output (its own Console over process.stdout).
    const capture = (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = String(chunk);
      for (const line of text.split('\n')) {
        if (!line.startsWith('{"_aws"')) continue;
        const record = JSON.parse(line) as Record<string, unknown> & {
          _aws: {
            CloudWatchMetrics: {
              Namespace: string;
              Dimensions: string[][];
              Metrics: { Name: string; Unit: string }[];
            }[];
          };
        };
        const [directive] = record._aws.CloudWatchMetrics;
        if (!directive) continue;
        lines.push({
          namespace: directive.Namespace,
          dimensionSets: directive.Dimensions,
          units: Object.fromEntries(directive.Metrics.map((m) => [m.Name, m.Unit])),
          record,
        });
        return true;
      }
      return write(chunk, ...rest);
    };
    vi.spyOn(process.stdout, 'write').mockImplementation(capture as typeof process.stdout.write);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    fanin.buildContext({ metrics });
  });

  /** Publishes what was counted, as the Lambda entry point does when an invocation ends. */
  function flush(): void {
    metrics.flush();
  }

  /** The values of a metric over every captured line of one definition (`undefined`: no definition). */
  function values(name: string, definition: string | undefined): number[] {
    return lines
      .filter((l) => l.record[MetricDimension.DEFINITION] === definition && name in l.record)
      .flatMap((l) => {
        const value = l.record[name];
        return Array.isArray(value) ? (value as number[]) : [value as number];
      });
  }
  const total = (name: string, definition: string | undefined) =>
    values(name, definition).reduce((a, b) => a + b, 0);

  const reply = (aggregateId: string, replyId: string) =>
    fanin.sendReply({ v: 1 }, { 'fanin-aggregate-id': aggregateId, 'fanin-reply-id': replyId });

  it('a completed aggregate: opened, two replies recorded, completed once, with its latency, under its definition', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'c-1', expected: 2 });
    await fanin.drain();
    fanin.clock.advance(250);

    // Act
    await reply('c-1', '0');
    await reply('c-1', '1');
    await fanin.drain();
    flush();

    // Assess
    expect(total(MetricName.AGGREGATES_OPENED, 'plain')).toBe(1);
    expect(total(MetricName.REPLIES_RECORDED, 'plain')).toBe(2);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(1);
    // The test clock moved 250 ms between the open and the seal.
    expect(values(MetricName.COMPLETION_LATENCY, 'plain')).toEqual([250]);
    const line = lines.find((l) => MetricName.AGGREGATES_COMPLETED in l.record);
    expect(line).toMatchObject({
      namespace: METRICS_NAMESPACE,
      dimensionSets: [[MetricDimension.SERVICE, MetricDimension.DEFINITION], [MetricDimension.SERVICE]],
      units: { [MetricName.AGGREGATES_COMPLETED]: 'Count', [MetricName.COMPLETION_LATENCY]: 'Milliseconds' },
      record: { service: SERVICE, definition: 'plain' },
    });
  });

  it('a duplicate reply is counted duplicate, not recorded again', async () => {
    // Kills the mutant "count every put as recorded".
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'd-1', expected: 2 });
    await fanin.drain();
    await reply('d-1', '0');
    await fanin.drain();
    flush();
    lines = [];

    // Act
    await reply('d-1', '0');
    await fanin.drain();
    flush();

    // Assess
    expect(total(MetricName.REPLIES_DUPLICATE, 'plain')).toBe(1);
    expect(total(MetricName.REPLIES_RECORDED, 'plain')).toBe(0);
  });

  it('a late reply (after the seal) is counted late, once, and the outcome is not counted again', async () => {
    // Kills the mutant "count late on every routing, not when first marked late" (the redelivery).
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'l-1', expected: 1 });
    await fanin.drain();
    await reply('l-1', '0');
    await fanin.drain();
    flush();
    lines = [];

    // Act
    await reply('l-1', 'straggler');
    await fanin.drain();
    await reply('l-1', 'straggler'); // its redelivery
    await fanin.drain();
    flush();

    // Assess
    expect(total(MetricName.REPLIES_LATE, 'plain')).toBe(1);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(0);
    expect(await fanin.outputs('late')).toMatchObject([{ aggregateId: 'l-1', replyId: 'straggler' }]);
  });

  it('an unknown reply is counted under the unknown definition, and a definition name is never taken from a message', async () => {
    // Kills the mutant "file a metric under the definition name it was given" (unbounded dimension values).
    // Prepare
    await reply('no-such-aggregate', '0');

    // Act
    await fanin.drain();
    metrics.count(MetricName.REPLIES_UNKNOWN, 'not-configured'); // a name as a message could give it
    flush();

    // Assess
    expect(total(MetricName.REPLIES_UNKNOWN, UNKNOWN_DEFINITION)).toBe(2);
    expect(lines.map((l) => l.record[MetricDimension.DEFINITION])).not.toContain('not-configured');
    expect(await fanin.outputs('unknown')).toMatchObject([{ aggregateId: 'no-such-aggregate' }]);
  });

  it('a timed-out aggregate is counted timed out when the sweeper seals it', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'short', aggregateId: 't-1' });
    await fanin.drain();
    fanin.clock.advance(1_500);

    // Act
    await fanin.sweep();
    flush();

    // Assess
    expect(total(MetricName.AGGREGATES_OPENED, 'short')).toBe(1);
    expect(total(MetricName.AGGREGATES_TIMED_OUT, 'short')).toBe(1);
    expect(values(MetricName.COMPLETION_LATENCY, 'short')).toEqual([1_500]);
  });

  it('a purged aggregate is counted purged', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'p-1', expected: 3 });
    await fanin.drain();

    // Act
    await fanin.sendControl({ command: 'purge', aggregateId: 'p-1' });
    await fanin.drain();
    flush();

    // Assess
    expect(total(MetricName.AGGREGATES_PURGED, 'plain')).toBe(1);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(0);
  });

  it('a failed aggregate (its aggregation throws) is counted failed', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'broken', aggregateId: 'f-1', expected: 1 });
    await fanin.drain();

    // Act
    await reply('f-1', '0');
    await fanin.drain();
    flush();

    // Assess
    expect(total(MetricName.AGGREGATES_FAILED, 'broken')).toBe(1);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'broken')).toBe(0);
  });

  /** Outputs whose `completed` channel fails the first `times` publications. */
  function completedOutputFailing(times: number): { outputs: OutputPublisher; failures: () => number } {
    const real = fanin.ctx.outputs;
    let failures = 0;
    return {
      outputs: {
        publish: (role, message, options) => {
          if (role === 'completed' && failures < times) {
            failures += 1;
            return Promise.reject(new Error('injected: the completed output is down'));
          }
          return real.publish(role, message, options);
        },
      },
      failures: () => failures,
    };
  }

  it('a completion that published, then failed to close, is resumed by its redelivered reply: its outcome counted once', async () => {
    // Kills the mutant "count the outcome where it is published" (the resumer publishes again).
    // Prepare: the result is published, then the close fails once; the reply comes back.
    let closeFailures = 0;
    const store = new Proxy(fanin.ctx.store, {
      get: (target, property, receiver) =>
        property === 'close' && closeFailures === 0
          ? () => {
              closeFailures += 1;
              return Promise.reject(new Error('injected: the close failed'));
            }
          : Reflect.get(target, property, receiver),
    });
    fanin.buildContext({ metrics, store });
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'r-1', expected: 1 });
    await fanin.drain();

    // Act
    await reply('r-1', '0');
    await fanin.drain();
    flush();

    // Assess
    expect(closeFailures).toBe(1);
    // Published by the first completer and again by the resumer (SQS deduplicates the second).
    expect(fanin.published('completed').filter((p) => p.body.aggregateId === 'r-1')).toHaveLength(2);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(1);
    expect(total(MetricName.COMPLETIONS_RESUMED, 'plain')).toBe(1);
    expect((await fanin.ctx.store.getHeader('r-1'))?.status).toBe('closed');
  });

  it('the sweeper counts a completing aggregate whose lease ran out, and resumes it without counting its outcome again', async () => {
    // Prepare: the completer fails to publish and its reply is not redelivered (as if it went to a DLQ).
    await fanin.sendRequest({ definition: 'plain', aggregateId: 's-1', expected: 1 });
    await fanin.drain();
    const down = completedOutputFailing(1);
    const failing = { ...fanin.ctx, outputs: down.outputs };
    const failed = await handleReplies(failing, [
      {
        messageId: 'm-s-1',
        body: '{"v":1}',
        attributes: { 'fanin-aggregate-id': 's-1', 'fanin-reply-id': '0' },
        receiveCount: 1,
      },
    ]);
    expect(failed).toEqual(new Set(['m-s-1']));
    flush();
    lines = [];

    // Act
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep();
    flush();

    // Assess
    expect(total(MetricName.COMPLETIONS_LEASE_EXPIRED, 'plain')).toBe(1);
    expect(total(MetricName.COMPLETIONS_RESUMED, 'plain')).toBe(1);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(0);
    const results = (await fanin.outputs('completed')).filter((o) => o.aggregateId === 's-1');
    expect(results.map((o) => o.id)).toEqual(['s-1/result']);
  });

  it('a sealed result that can never be published (too large for its output) is counted stuck', async () => {
    // Prepare
    await fanin.sendRequest({ definition: 'plain', aggregateId: 'k-1', expected: 1 });
    await fanin.drain();
    const tooLarge: OutputPublisher = {
      publish: (role, message, options) =>
        role === 'completed'
          ? Promise.reject(new OutputTooLargeError(message.id, 300_000))
          : fanin.ctx.outputs.publish(role, message, options),
    };

    // Act
    const failed = await handleReplies({ ...fanin.ctx, outputs: tooLarge }, [
      {
        messageId: 'm-k-1',
        body: '{"v":1}',
        attributes: { 'fanin-aggregate-id': 'k-1', 'fanin-reply-id': '0' },
        receiveCount: 1,
      },
    ]);
    flush();

    // Assess
    expect(failed).toEqual(new Set(['m-k-1']));
    expect(total(MetricName.COMPLETIONS_STUCK, 'plain')).toBe(1);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(1);
  });

  it('a failed sweep is counted under the service alone, published by the entry point when the invocation ends', async () => {
    // Prepare
    const store = new Proxy(fanin.ctx.store, {
      get: (target, property, receiver) =>
        property === 'dueItems'
          ? () => Promise.reject(new Error('injected: the due index cannot be read'))
          : Reflect.get(target, property, receiver),
    });
    const ctx = { ...fanin.ctx, store };
    const handler = instrumented(
      'sweeper',
      makeSweeperHandler(() => ctx),
      () => ({ metrics }),
    );

    // Act
    await expect(handler({})).rejects.toThrow('injected');

    // Assess: no flush by the test, the entry point published it.
    expect(total(MetricName.SWEEP_CYCLES_FAILED, undefined)).toBe(1);
    expect(lines.find((l) => MetricName.SWEEP_CYCLES_FAILED in l.record)?.dimensionSets).toEqual([
      [MetricDimension.SERVICE],
    ]);
  });

  it('more latencies than one EMF line holds go in further lines, each under its definition', () => {
    // Kills the mutant "add the dimensions after the values" (Powertools flushes itself at 100 values).
    // Prepare
    for (let i = 0; i < 150; i += 1) metrics.latency(MetricName.COMPLETION_LATENCY, 'plain', i);
    metrics.count(MetricName.AGGREGATES_COMPLETED, 'plain', 150);

    // Act
    flush();

    // Assess
    expect(lines).toHaveLength(2);
    expect(lines.map((l) => l.record[MetricDimension.DEFINITION])).toEqual(['plain', 'plain']);
    expect(values(MetricName.COMPLETION_LATENCY, 'plain')).toHaveLength(150);
    expect(total(MetricName.AGGREGATES_COMPLETED, 'plain')).toBe(150);
  });

  it('an invocation that counted nothing writes no EMF line', async () => {
    // Prepare
    const handler = instrumented(
      'idle',
      async () => 'nothing to do',
      () => ({ metrics }),
    );

    // Act
    await handler({});

    // Assess
    expect(lines).toEqual([]);
  });
});
