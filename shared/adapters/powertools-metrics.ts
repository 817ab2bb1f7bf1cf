import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import {
  DEFAULT_SERVICE_NAME,
  METRIC_UNITS,
  METRICS_NAMESPACE,
  MetricDimension,
  type MetricName,
  ObservabilityEnv,
  UNKNOWN_DEFINITION,
} from '../observability/metric-names.ts';
import type { Metrics } from '../ports.ts';

/** Where a metric is filed: one definition's, or none (the service as a whole). */
type DefinitionKey = string | undefined;

/** At most this many values of one metric go in one EMF line (CloudWatch's and Powertools' limit). */
const MAX_VALUES_PER_LINE = 100;

export interface PowertoolsMetricsOptions {
  /** The configured definitions: only their names become `definition` values (never a name from a message). */
  readonly definitions: Iterable<string>;
  /** The `service` dimension. @default `POWERTOOLS_SERVICE_NAME`, else `fanin` */
  readonly serviceName?: string;
}

/**
 * The {@link Metrics} port on Powertools Metrics: CloudWatch Embedded Metric Format lines on
 * standard output, which Lambda's log pipeline turns into metrics at no API cost.
 *
 * Counts and latencies are buffered in the execution environment and published by
 * {@link flush}, once per invocation: one EMF line per definition touched, each under the dimension
 * sets `[service, definition]` and `[service]` (so the total needs no metric math), and one line
 * under `[service]` for what concerns no definition. Counts of one name are summed into one value
 * per line; latencies are kept one value each (statistics stay exact).
 */
export class PowertoolsMetricsAdapter implements Metrics {
  private readonly metrics: PowertoolsMetrics;
  private readonly definitions: ReadonlySet<string>;
  private readonly counts = new Map<DefinitionKey, Map<MetricName, number>>();
  private readonly latencies = new Map<DefinitionKey, Map<MetricName, number[]>>();

  public constructor(options: PowertoolsMetricsOptions) {
    this.definitions = new Set(options.definitions);
    this.metrics = new PowertoolsMetrics({
      namespace: METRICS_NAMESPACE,
      serviceName:
        options.serviceName ?? (process.env[ObservabilityEnv.SERVICE_NAME] || DEFAULT_SERVICE_NAME),
    });
  }

  public count(name: MetricName, definition?: string, n = 1): void {
    if (!(n > 0)) return;
    const byName = getOrCreate(this.counts, this.key(definition), () => new Map<MetricName, number>());
    byName.set(name, (byName.get(name) ?? 0) + n);
  }

  public latency(name: MetricName, definition: string | undefined, ms: number): void {
    if (!Number.isFinite(ms)) return;
    const byName = getOrCreate(this.latencies, this.key(definition), () => new Map<MetricName, number[]>());
    getOrCreate(byName, name, () => []).push(Math.max(0, ms));
  }

  /** Publishes everything buffered since the last flush (nothing when nothing was counted). */
  public flush(): void {
    const keys = new Set<DefinitionKey>([...this.counts.keys(), ...this.latencies.keys()]);
    for (const key of keys) {
      const counts = this.counts.get(key) ?? new Map<MetricName, number>();
      const latencies = [...(this.latencies.get(key) ?? new Map<MetricName, number[]>())];
      let first = true;
      // Latencies beyond one line's share go in further lines, each with its dimensions.
      while (first || latencies.some(([, values]) => values.length > 0)) {
        this.dimensions(key);
        if (first)
          for (const [name, total] of counts) this.metrics.addMetric(name, METRIC_UNITS[name], total);
        for (const [name, values] of latencies) {
          for (const value of values.splice(0, MAX_VALUES_PER_LINE))
            this.metrics.addMetric(name, METRIC_UNITS[name], value);
        }
        if (this.metrics.hasStoredMetrics()) this.metrics.publishStoredMetrics();
        else this.metrics.clearDimensions();
        first = false;
      }
    }
    this.counts.clear();
    this.latencies.clear();
  }

  /** A configured definition's name; anything else (a name a message gave) is {@link UNKNOWN_DEFINITION}. */
  private key(definition: string | undefined): DefinitionKey {
    if (definition === undefined) return undefined;
    return this.definitions.has(definition) ? definition : UNKNOWN_DEFINITION;
  }

  private dimensions(key: DefinitionKey): void {
    if (key === undefined) return;
    this.metrics.addDimension(MetricDimension.DEFINITION, key);
    // A second dimension set with no dimension of its own: `[service]`, the total over definitions.
    this.metrics.addDimensions({});
  }
}

function getOrCreate<K, V>(map: Map<K, V>, key: K, create: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = create();
    map.set(key, value);
  }
  return value;
}
