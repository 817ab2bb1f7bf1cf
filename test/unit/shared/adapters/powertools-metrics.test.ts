import { afterEach, describe, expect, it, vi } from 'vitest';
import { PowertoolsMetricsAdapter } from '../../../../shared/adapters/powertools-metrics.ts';

/**
 * The metrics port on Powertools: buffered per invocation and flushed as CloudWatch Embedded
 * Metric Format lines on standard output, one per definition touched under `[service, definition]`
 * and `[service]`, counts summed, latencies one value each and at most 100 to a line, and a
 * definition name no configuration holds filed as `(unknown)`. The module's own test: it reads the
 * EMF lines written to standard output.
 */

interface EmfLine {
  readonly _aws: {
    readonly CloudWatchMetrics: readonly {
      readonly Namespace: string;
      readonly Dimensions: readonly (readonly string[])[];
      readonly Metrics: readonly { Name: string; Unit: string }[];
    }[];
  };
  readonly [field: string]: unknown;
}

/** The EMF lines written while `act` runs. */
function emf(act: () => void): EmfLine[] {
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(' '));
  });
  try {
    act();
  } finally {
    write.mockRestore();
    log.mockRestore();
  }
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfLine);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('PowertoolsMetricsAdapter', () => {
  it('publishes nothing until flushed, and nothing when nothing was counted', () => {
    // Prepare
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['orders'], serviceName: 'svc' });

    // Act
    const counting = emf(() => metrics.count('AggregatesOpened', 'orders'));
    const empty = emf(() => new PowertoolsMetricsAdapter({ definitions: [], serviceName: 'svc' }).flush());

    // Assess
    expect(counting).toEqual([]);
    expect(empty).toEqual([]);
  });

  it('sums the counts of a definition into one line under [service, definition] and [service]', () => {
    // Prepare
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['orders'], serviceName: 'svc' });
    metrics.count('AggregatesOpened', 'orders');
    metrics.count('AggregatesOpened', 'orders', 2);
    metrics.count('AggregatesOpened', 'orders', 0);

    // Act
    const lines = emf(() => metrics.flush());

    // Assess
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line?.AggregatesOpened).toBe(3);
    expect(line?.definition).toBe('orders');
    expect(line?.service).toBe('svc');
    const directive = line?._aws.CloudWatchMetrics[0];
    expect(directive?.Namespace).toBe('fanin');
    expect(directive?.Dimensions.map((d) => [...d].sort())).toEqual(
      expect.arrayContaining([['definition', 'service'], ['service']]),
    );
  });

  it('files a definition no configuration holds as (unknown), and one line per definition touched', () => {
    // Prepare
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['orders'], serviceName: 'svc' });
    metrics.count('AggregatesOpened', 'orders');
    metrics.count('AggregatesOpened', 'made-up-by-a-message');
    metrics.count('AggregatesOpened');

    // Act
    const lines = emf(() => metrics.flush());

    // Assess
    expect(lines.map((l) => l.definition ?? null).sort()).toEqual(['(unknown)', 'orders', null].sort());
    expect(JSON.stringify(lines)).not.toContain('made-up-by-a-message');
  });

  it('keeps each latency as its own value, at most 100 to a line, none negative', () => {
    // Prepare
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['orders'], serviceName: 'svc' });
    for (let i = 0; i < 150; i += 1) metrics.latency('CompletionLatency', 'orders', i - 1);
    metrics.latency('CompletionLatency', 'orders', Number.NaN);

    // Act
    const lines = emf(() => metrics.flush());

    // Assess
    const values = lines.flatMap((l) => {
      const v = l.CompletionLatency;
      return Array.isArray(v) ? (v as number[]) : [v as number];
    });
    expect(lines.length).toBe(2);
    for (const l of lines)
      expect(
        Array.isArray(l.CompletionLatency) ? (l.CompletionLatency as number[]).length : 1,
      ).toBeLessThanOrEqual(100);
    expect(values).toHaveLength(150);
    expect(Math.min(...values)).toBe(0);
  });

  it('starts afresh after a flush', () => {
    // Prepare
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['orders'], serviceName: 'svc' });
    metrics.count('AggregatesOpened', 'orders');
    emf(() => metrics.flush());

    // Act
    const again = emf(() => metrics.flush());

    // Assess
    expect(again).toEqual([]);
  });
});
