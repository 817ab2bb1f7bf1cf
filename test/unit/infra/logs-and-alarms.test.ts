import { Duration } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { defaultCompletionLatencyAlarm } from '../../../infra/fanin.ts';
import { METRICS_NAMESPACE, MetricName } from '../../../shared/observability/metric-names.ts';
import { construct, logicalId, synthFanin } from './synth.ts';

/** A synth takes a few seconds on a loaded machine; no assertion is timed. */
const SYNTH_TIMEOUT = 60_000;

/** The alarms of a template, by alarm name. */
function alarmsByName(template: Template): Map<string, Record<string, unknown>> {
  return new Map(
    Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => {
      const props = a.Properties as Record<string, unknown>;
      return [String(props.AlarmName), props];
    }),
  );
}

/** Every Lambda function's environment variables. */
function environments(template: Template): Record<string, string>[] {
  return Object.values(template.findResources('AWS::Lambda::Function')).map(
    (fn) =>
      ((fn.Properties as { Environment?: { Variables?: Record<string, string> } }).Environment?.Variables ??
        {}) as Record<string, string>,
  );
}

describe('the handlers log level', { timeout: SYNTH_TIMEOUT }, () => {
  it('logLevel sets POWERTOOLS_LOG_LEVEL on every handler; without it the variable is not set (INFO)', () => {
    // GIVEN a Fanin with logLevel DEBUG and one without WHEN synthesized
    const debug = environments(synthFanin({ logLevel: 'DEBUG' }).template);
    const plain = environments(synthFanin().template);
    // THEN each of the six handlers of the first has the level, none of the second
    expect(debug).toHaveLength(6);
    for (const variables of debug) expect(variables.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
    for (const variables of plain) expect(variables).not.toHaveProperty('POWERTOOLS_LOG_LEVEL');
  });

  it.each(['CRITICAL', 'SILENT', 'verbose'])(
    'refuses logLevel %s, which would hide the error lines the use cases alarm on',
    (level) => {
      expect(construct({ logLevel: level as 'INFO' })).toThrow(
        `logLevel must be one of TRACE, DEBUG, INFO, WARN, ERROR (above ERROR the use cases' alarms would no longer see the error lines they count) (given "${level}")`,
      );
    },
  );
});

describe('duration and completion latency alarms', { timeout: SYNTH_TIMEOUT }, () => {
  it("alarms on each handler's p99 duration at 80% of its timeout in 2 of 3 five-minute periods", () => {
    // GIVEN a Fanin with its defaults (30 s timeout) WHEN synthesized
    const { stack, fanin, template } = synthFanin();
    const alarms = alarmsByName(template);
    // THEN each of the six handlers has its duration alarm at 24,000 ms
    expect(Object.keys(fanin.observability.functionDurationAlarms)).toHaveLength(6);
    for (const [role, fn] of Object.entries(fanin.functions)) {
      expect(alarms.get(`fanin-${role}-duration`), role).toMatchObject({
        Namespace: 'AWS/Lambda',
        MetricName: 'Duration',
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn) } }],
        ExtendedStatistic: 'p99',
        Period: 300,
        Threshold: 24_000,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'notBreaching',
      });
    }
    expect(fanin.alarms).toEqual(
      expect.arrayContaining(Object.values(fanin.observability.functionDurationAlarms)),
    );
  });

  it('the duration threshold follows functionTimeout and durationAlarmPercent', () => {
    const { template } = synthFanin({ functionTimeout: Duration.seconds(120), durationAlarmPercent: 50 });
    expect(alarmsByName(template).get('fanin-reply-duration')).toMatchObject({ Threshold: 60_000 });
  });

  it('refuses a durationAlarmPercent outside 1 to 100', () => {
    expect(construct({ durationAlarmPercent: 0 })).toThrow(
      'durationAlarmPercent must be between 1 and 100 inclusive (given 0)',
    );
    expect(construct({ durationAlarmPercent: 101 })).toThrow('(given 101)');
  });

  it("alarms on the p99 of fanin's CompletionLatency at completionLatencyAlarm for 3 five-minute periods", () => {
    // GIVEN a Fanin whose completion latency alarm is at 2 minutes WHEN synthesized
    const { fanin, template } = synthFanin({ completionLatencyAlarm: Duration.minutes(2) });
    // THEN the alarm watches the metric the handlers emit, service-wide, at 120,000 ms
    expect(alarmsByName(template).get('fanin-completion-latency')).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: MetricName.COMPLETION_LATENCY,
      Dimensions: [{ Name: 'service', Value: 'fanin' }],
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: 120_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 3,
      TreatMissingData: 'notBreaching',
    });
    expect(fanin.alarms).toContain(fanin.observability.completionLatencyAlarm);
  });

  it('by default the latency alarm is at the longest deadline any aggregate may have, plus a lease and two sweeps', () => {
    // GIVEN definitions whose longest allowed deadline is a request's 3-day timeout
    const { fanin, template } = synthFanin({
      definitions: [
        { name: 'short', completion: { strategy: 'all' }, timeoutSeconds: 30 },
        {
          name: 'asked',
          completion: { strategy: 'all' },
          timeoutSeconds: 60,
          requestParameters: { timeoutSeconds: { min: 1, max: 3 * 86_400 } },
        },
      ],
    });
    // THEN the threshold is 3 days + the lease (30 s timeout + 90 s) + 2 x 60 s sweeps
    const expected = (3 * 86_400 + 120 + 120) * 1000;
    expect(defaultCompletionLatencyAlarm(fanin.topology).toMilliseconds()).toBe(expected);
    expect(alarmsByName(template).get('fanin-completion-latency')).toMatchObject({ Threshold: expected });
  });

  it('refuses a completionLatencyAlarm that is not whole seconds', () => {
    expect(construct({ completionLatencyAlarm: Duration.millis(1500) })).toThrow(
      'completionLatencyAlarm must be a whole number of seconds, at least 1 (given 1 second 500 millis)',
    );
  });
});
