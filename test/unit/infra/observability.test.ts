import { Duration, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixedMonthly, readmeAtRestTotal } from '../../../bench/cost/fixed.ts';
import type { Prices } from '../../../bench/cost/prices.ts';
import prices from '../../../bench/prices.json' with { type: 'json' };
import { defaultCompletionLatencyAlarm } from '../../../infra/fanin.ts';
import { MAX_SQS_DELAY_SECONDS } from '../../../infra/observability.ts';
import { METRICS_NAMESPACE, MetricName } from '../../../shared/observability/metric-names.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { construct, logicalId, type Synth, synthFanin } from './synth.ts';

/** The alarms of a template, by alarm name. */
function alarmsByName(template: Template): Map<string, Record<string, unknown>> {
  const alarms = template.findResources('AWS::CloudWatch::Alarm');
  return new Map(
    Object.values(alarms).map((a) => {
      const props = a.Properties as Record<string, unknown>;
      return [String(props.AlarmName), props];
    }),
  );
}

/** A synth takes a few seconds on a loaded machine (several per test here); no assertion is timed. */
const SYNTH_TIMEOUT = 60_000;

describe('observability: the alarms', { timeout: SYNTH_TIMEOUT }, () => {
  let synth: Synth;
  let alarms: Map<string, Record<string, unknown>>;

  beforeAll(() => {
    // GIVEN a Fanin with its defaults (prefix fanin, 2 reply partitions) WHEN synthesized
    synth = synthFanin();
    alarms = alarmsByName(synth.template);
  }, SYNTH_TIMEOUT);

  it("alarms on each handler's Lambda errors and throttles, any in 5 minutes", () => {
    const { stack, fanin } = synth;
    for (const [role, fn] of Object.entries(fanin.functions)) {
      for (const [suffix, metric] of [
        ['errors', 'Errors'],
        ['throttles', 'Throttles'],
      ] as const) {
        const alarm = alarms.get(`fanin-${role}-${suffix}`);
        expect(alarm, `${role} ${suffix}`).toMatchObject({
          Namespace: 'AWS/Lambda',
          MetricName: metric,
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(stack, fn) } }],
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        });
      }
    }
  });

  it("alarms on the state table's read and write throttling that lasts three 5-minute periods", () => {
    const { stack, fanin } = synth;
    for (const kind of ['read', 'write']) {
      expect(alarms.get(`fanin-state-${kind}-throttled`)).toMatchObject({
        Namespace: 'AWS/DynamoDB',
        MetricName: kind === 'read' ? 'ReadThrottleEvents' : 'WriteThrottleEvents',
        Dimensions: [{ Name: 'TableName', Value: { Ref: logicalId(stack, fanin.table) } }],
        EvaluationPeriods: 3,
        DatapointsToAlarm: 3,
        Threshold: 1,
      });
    }
  });

  it('alarms on the age of the oldest message of every queue a handler consumes, and of no output queue', () => {
    const { stack, fanin } = synth;
    const consumed = [
      fanin.queues[QueueRole.INGRESS],
      fanin.queues[QueueRole.CONTROL],
      fanin.queues[QueueRole.TIMER],
      fanin.queues[QueueRole.BACKLOG],
      ...fanin.replyPartitions,
    ];
    for (const owner of consumed) {
      const name = stack.resolve(owner.queue.queueName) as { 'Fn::GetAtt': string[] };
      const alarm = [...alarms.values()].find(
        (a) =>
          a.MetricName === 'ApproximateAgeOfOldestMessage' &&
          JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: name }]),
      );
      // the timer queue's messages may wait SQS's longest delay on purpose (mutant killed: one threshold for all)
      const threshold = 900 + (owner === fanin.queues[QueueRole.TIMER] ? MAX_SQS_DELAY_SECONDS : 0);
      expect(alarm, logicalId(stack, owner.queue)).toMatchObject({
        Statistic: 'Maximum',
        Period: 60,
        EvaluationPeriods: 5,
        Threshold: threshold,
      });
    }
    const ages = [...alarms.values()].filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage');
    expect(ages).toHaveLength(consumed.length);
  });

  it("alarms on failing sweeps and distributor cycles from the handlers' metrics, 2 of the last 3 cycles", () => {
    for (const [name, metric] of [
      ['fanin-sweeps-failing', MetricName.SWEEP_CYCLES_FAILED],
      ['fanin-distributor-cycles-failing', MetricName.DISTRIBUTOR_CYCLES_FAILED],
    ] as const) {
      expect(alarms.get(name)).toMatchObject({
        Namespace: METRICS_NAMESPACE,
        MetricName: metric,
        // the service dimension is the prefix, as POWERTOOLS_SERVICE_NAME (fanin.test.ts)
        Dimensions: [{ Name: 'service', Value: 'fanin' }],
        Statistic: 'Sum',
        Period: 180,
        Threshold: 2,
      });
    }
  });

  it("keeps the use cases' completion-stuck alarm for aggregates stuck in completing", () => {
    expect(alarms.get('fanin-completion-stuck')).toMatchObject({ Threshold: 1 });
  });

  it('lists every alarm of the template in fanin.alarms, once', () => {
    expect(synth.fanin.alarms).toHaveLength(alarms.size);
    expect(new Set(synth.fanin.alarms).size).toBe(alarms.size);
  });
});

describe('observability: props', { timeout: SYNTH_TIMEOUT }, () => {
  it('gives every alarm the alarm actions', () => {
    // GIVEN an SNS topic action
    const topic = sns.Topic.fromTopicArn(new Stack(), 'Ops', 'arn:aws:sns:us-east-1:123456789012:ops');
    const { template } = synthFanin({ alarmActions: [new cloudwatchActions.SnsAction(topic)] });
    // THEN every alarm, the new ones included, notifies it
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect((alarm.Properties as { AlarmActions?: unknown[] }).AlarmActions).toEqual([topic.topicArn]);
    }
  });

  it('sets the oldest-message threshold and the cycle periods from the props', () => {
    const { template } = synthFanin({
      oldestMessageAgeAlarm: Duration.minutes(30),
      partitioning: { distributorIntervalSeconds: 300 },
    });
    const alarms = alarmsByName(template);
    expect(alarms.get('fanin-ingress-oldest-message')).toMatchObject({ Threshold: 1800 });
    expect(alarms.get('fanin-timer-oldest-message')).toMatchObject({ Threshold: 2700 });
    expect(alarms.get('fanin-distributor-cycles-failing')).toMatchObject({ Period: 900 });
  });

  it('refuses an oldest-message threshold under a minute, naming it', () => {
    expect(() => synthFanin({ oldestMessageAgeAlarm: Duration.seconds(30) })).toThrow(
      /oldestMessageAgeAlarm must be a whole number of seconds, at least 60 \(given 30 seconds\)/,
    );
  });
});

describe('observability: the dashboard', { timeout: SYNTH_TIMEOUT }, () => {
  it('builds the dashboard <prefix>-fanin-<region> with every fanin metric, and none with dashboard: false', () => {
    const { template, fanin } = synthFanin({ prefix: 'shop' });
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // dashboards are global to an account: the region keeps two regions' deployments apart
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['', ['shop-fanin-', { Ref: 'AWS::Region' }]] },
    });
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    for (const name of Object.values(MetricName)) {
      if (name === MetricName.COMPLETION_LATENCY || body.includes(`\\"${name}\\"`)) continue;
      expect.fail(`the dashboard has no ${name}`);
    }
    expect(body).toContain('CompletionLatency');
    expect(fanin.observability.dashboard).toBeDefined();
    synthFanin({ dashboard: false }).template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
  });

  it('shows at most 100 alarms in its status widget, its own first', () => {
    // GIVEN the most partitions that fit: more alarms than a status widget holds
    const { template, fanin } = synthFanin({ replyPartitions: 25 });
    expect(fanin.alarms.length).toBeGreaterThan(100);
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    // each shown by the ARN of its name (no Fn::GetAtt: moto creates alarms without attributes)
    const name = (alarm: cloudwatch.Alarm) => (alarm.node.defaultChild as cloudwatch.CfnAlarm).alarmName;
    const shown = fanin.alarms.filter((alarm) => body.includes(`:alarm:${name(alarm)}\\"`));
    // (mutant killed: every alarm in the widget, which CloudWatch refuses over 100)
    expect(shown).toHaveLength(100);
    for (const alarm of fanin.observability.alarms) expect(shown).toContain(alarm);
  });
});

describe("the at-rest cost agrees with the stack's alarms and README", { timeout: SYNTH_TIMEOUT }, () => {
  it.each([1, 2, 5])('prices as many alarms as the stack with %i reply partitions creates', (n) => {
    // GIVEN a stack with n partitions WHEN fixedMonthly prices an idle deployment of it
    const { template } = synthFanin({ replyPartitions: n });
    const alarms = Object.keys(template.findResources('AWS::CloudWatch::Alarm')).length;
    const fixed = fixedMonthly(prices as Prices, {
      replyPartitions: n,
      sweepIntervalSeconds: 60,
      distributorIntervalSeconds: 60,
    });
    // THEN the alarm line is that many alarms, and the dashboard is priced
    const line = fixed.items.find((i) => i.item === 'CloudWatch alarms');
    expect(line?.usd).toBeCloseTo(alarms * prices.cloudwatch.standard_alarm_per_month, 6);
    expect(fixed.items.find((i) => i.item === 'CloudWatch dashboard')?.usd).toBe(
      prices.cloudwatch.dashboard_per_month,
    );
  });

  it("states README's total at rest as fixedMonthly prices it", async () => {
    const fixed = fixedMonthly(prices as Prices, {
      replyPartitions: 2,
      sweepIntervalSeconds: 60,
      distributorIntervalSeconds: 60,
    });
    const readme = await readmeAtRestTotal();
    expect(readme).toBeDefined();
    expect(Math.abs((readme ?? 0) - fixed.total)).toBeLessThanOrEqual(0.01);
  });
});

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
