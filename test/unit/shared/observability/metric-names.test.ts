import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  METRIC_UNITS,
  METRICS_NAMESPACE,
  MetricName,
  OUTCOME_METRICS,
  REPLY_FATE_METRICS,
  UNKNOWN_DEFINITION,
} from '../../../../shared/observability/metric-names.ts';

/**
 * The metric names are the contract with deployed dashboards and alarms: each one unique and listed,
 * with its unit, in docs/observability.md ("Metrics"), and the docs list none the handlers lack.
 */
const doc = readFileSync(new URL('../../../../docs/observability.md', import.meta.url), 'utf8');

/** The rows of the docs' metrics table: name and unit. */
function documentedMetrics(): Map<string, string> {
  const start = doc.indexOf('| Metric | Unit | Dimensions | Published when |');
  expect(start).toBeGreaterThan(-1);
  const rows = doc.slice(start).split('\n\n')[0]?.split('\n').slice(2) ?? [];
  return new Map(
    rows.map((row) => {
      const [, name, unit] = row.split('|').map((cell) => cell.trim());
      return [name?.replaceAll('`', '') ?? '', unit ?? ''];
    }),
  );
}

describe('metric names', () => {
  it('are unique', () => {
    const names = Object.values(MetricName);
    expect(new Set(names).size).toBe(names.length);
  });

  it('are each documented with their unit, and the docs list no other', () => {
    const documented = documentedMetrics();
    expect([...documented.keys()].sort()).toEqual(Object.values(MetricName).sort());
    for (const [name, unit] of documented) expect(METRIC_UNITS[name as MetricName], name).toBe(unit);
  });

  it('are published under the documented namespace', () => {
    expect(doc).toContain(`**Namespace**: \`${METRICS_NAMESPACE}\``);
  });

  it('file a reply naming no configured definition under the documented (unknown)', () => {
    expect(doc).toContain(`filed under \`${UNKNOWN_DEFINITION}\``);
  });

  it('count each sealed outcome and each fate of a reply under its own metric', () => {
    expect(OUTCOME_METRICS).toEqual({
      completed: 'AggregatesCompleted',
      'timed-out': 'AggregatesTimedOut',
      purged: 'AggregatesPurged',
      failed: 'AggregatesFailed',
    });
    expect(REPLY_FATE_METRICS).toEqual({ recorded: 'RepliesRecorded', duplicate: 'RepliesDuplicate' });
  });
});
