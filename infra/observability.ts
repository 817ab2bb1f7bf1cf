import { ArnFormat, Duration, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, MetricDimension, MetricName } from '../shared/observability/metric-names.ts';

/** SQS's longest delivery delay: a timer message may legitimately wait this long before it is received. */
export const MAX_SQS_DELAY_SECONDS = 900;

/** A queue whose oldest message's age is alarmed on: one a fanin handler consumes. */
export interface WorkingQueue {
  /** The queue's name, for the alarm's name and description. */
  readonly name: string;
  readonly queue: sqs.IQueue;
  /** Its messages may be delayed by up to SQS's 15 minutes (the timer queue): the threshold is that much higher. */
  readonly delayed?: boolean;
}

/** Properties of {@link FaninObservability}. */
export interface FaninObservabilityProps {
  /** The stack's prefix: alarm and dashboard names start with it. */
  readonly prefix: string;
  /** The `service` dimension of the handlers' metrics (`POWERTOOLS_SERVICE_NAME`). */
  readonly serviceName: string;
  /** The handlers, by role (fanOut, reply, timer, sweeper, control, distributor). */
  readonly functions: Readonly<Record<string, lambda.IFunction>>;
  /** The state table. */
  readonly table: dynamodb.ITable;
  /** The queues fanin's handlers consume (ingress, control, timer, backlog, the reply partitions). */
  readonly workingQueues: readonly WorkingQueue[];
  /** Every dead-letter queue, for the dashboard (their alarms are the queues' own). */
  readonly deadLetterQueues: readonly sqs.IQueue[];
  /** The reply partitions and the backlog, whose depth the dashboard graphs. */
  readonly replyQueues: readonly sqs.IQueue[];
  /** How often the sweeper runs, in seconds. */
  readonly sweepIntervalSeconds: number;
  /** How often the distributor runs, in seconds. */
  readonly distributorIntervalSeconds: number;
  /** Alarm when a working queue's oldest message is this old (the timer queue: 15 minutes more). */
  readonly oldestMessageAgeAlarm: Duration;
  /** Actions of every alarm. */
  readonly alarmActions: readonly cloudwatch.IAlarmAction[];
  /** Build the CloudWatch dashboard. */
  readonly dashboard: boolean;
  /** Alarms the stack already has (DLQs, partition depths, the use cases' alarms), for the dashboard's status widget. */
  readonly existingAlarms: readonly cloudwatch.IAlarm[];
  /** The handlers' timeout, which their duration alarms compare with. @default Duration.seconds(30) */
  readonly functionTimeout?: Duration;
  /** A handler's duration alarm fires at this percentage of its timeout (p99). @default 80 */
  readonly durationAlarmPercent?: number;
  /**
   * The completion latency alarm fires when the p99 of `CompletionLatency` reaches this.
   * @default - no completion latency alarm (the Fanin construct always gives one)
   */
  readonly completionLatencyAlarm?: Duration;
}

/** The most alarms a CloudWatch alarm status widget shows. */
const MAX_STATUS_ALARMS = 100;

/** A failing cycle alarm fires when this many of the last three cycles failed. */
const FAILED_CYCLES_OF_THREE = 2;

/**
 * The stack's alarms on what the queues' own alarms do not see, and its CloudWatch dashboard:
 * - each handler's Lambda `Errors` and `Throttles` (any in 5 minutes);
 * - the state table's read and write throttle events (some in each of three 5-minute periods:
 *   on-demand tables throttle briefly on a sudden peak, and hot aggregates back off in place);
 * - the age of the oldest message of every queue a handler consumes (5 minutes over the threshold);
 * - failing sweeps and distributor cycles (the handlers' `SweepCyclesFailed` and
 *   `DistributorCyclesFailed` metrics: 2 of the last 3 cycles);
 * - each handler's p99 `Duration` near its timeout (`durationAlarmPercent`, 2 of 3 five-minute periods);
 * - the p99 of `CompletionLatency` at or above `completionLatencyAlarm` (3 five-minute periods).
 *
 * Aggregates stuck in `completing` raise the use cases' `completion-stuck` alarm (infra/use-case-alarms.ts);
 * the dashboard graphs the `CompletionsStuck`, `CompletionsLeaseExpired` and `CompletionsResumed`
 * metrics beside it. Names and dimensions come from shared/observability/metric-names.ts.
 */
export class FaninObservability extends Construct {
  /** Every alarm this construct creates. */
  public readonly alarms: readonly cloudwatch.Alarm[];
  /** `Errors` of each handler, by role. */
  public readonly functionErrorAlarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** `Throttles` of each handler, by role. */
  public readonly functionThrottleAlarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** p99 `Duration` of each handler near its timeout (`durationAlarmPercent`), by role. */
  public readonly functionDurationAlarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** p99 of the handlers' `CompletionLatency` at or above `completionLatencyAlarm`, when it is given. */
  public readonly completionLatencyAlarm?: cloudwatch.Alarm;
  /** The state table's `ReadThrottleEvents` and `WriteThrottleEvents`. */
  public readonly tableThrottleAlarms: { readonly read: cloudwatch.Alarm; readonly write: cloudwatch.Alarm };
  /** `ApproximateAgeOfOldestMessage` of each working queue, by queue name. */
  public readonly queueAgeAlarms: Readonly<Record<string, cloudwatch.Alarm>>;
  /** Failing sweeps. */
  public readonly sweepFailureAlarm: cloudwatch.Alarm;
  /** Failing distributor cycles. */
  public readonly distributorFailureAlarm: cloudwatch.Alarm;
  /** The dashboard `<prefix>-fanin-<region>`, unless disabled. */
  public readonly dashboard?: cloudwatch.Dashboard;

  private readonly props: FaninObservabilityProps;

  public constructor(scope: Construct, id: string, props: FaninObservabilityProps) {
    super(scope, id);
    this.props = props;
    const alarms: cloudwatch.Alarm[] = [];
    const add = (alarm: cloudwatch.Alarm): cloudwatch.Alarm => {
      for (const action of props.alarmActions) alarm.addAlarmAction(action);
      alarms.push(alarm);
      return alarm;
    };
    const fiveMinutes = Duration.minutes(5);

    const errors: Record<string, cloudwatch.Alarm> = {};
    const throttles: Record<string, cloudwatch.Alarm> = {};
    for (const [role, fn] of Object.entries(props.functions)) {
      errors[role] = add(
        fn
          .metricErrors({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM })
          .createAlarm(this, `${role}-errors`, {
            alarmName: `${props.prefix}-${role}-errors`,
            alarmDescription: `The ${role} handler failed (an invocation error, not a reported batch item failure): see its log group.`,
            threshold: 1,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
      throttles[role] = add(
        fn
          .metricThrottles({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM })
          .createAlarm(this, `${role}-throttles`, {
            alarmName: `${props.prefix}-${role}-throttles`,
            alarmDescription: `Lambda throttled the ${role} handler: its reserved concurrency or the account's concurrency is exhausted.`,
            threshold: 1,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
    }
    this.functionErrorAlarms = errors;
    this.functionThrottleAlarms = throttles;

    // Invocations close to their timeout: the next slower one is stopped by Lambda mid-batch.
    const timeout = props.functionTimeout ?? Duration.seconds(30);
    const percent = props.durationAlarmPercent ?? 80;
    const durationThresholdMs = Math.round((timeout.toMilliseconds() * percent) / 100);
    const durations: Record<string, cloudwatch.Alarm> = {};
    for (const [role, fn] of Object.entries(props.functions)) {
      durations[role] = add(
        fn
          .metricDuration({ period: fiveMinutes, statistic: cloudwatch.Stats.p(99) })
          .createAlarm(this, `${role}-duration`, {
            alarmName: `${props.prefix}-${role}-duration`,
            alarmDescription: `The ${role} handler's p99 duration reached ${percent}% of its ${timeout.toSeconds()} s timeout (${durationThresholdMs} ms) in 2 of the last 3 five-minute periods: raise functionTimeout or functionMemorySize, or find what is slow in its log group.`,
            threshold: durationThresholdMs,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 3,
            datapointsToAlarm: 2,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
    }
    this.functionDurationAlarms = durations;

    const latency = props.completionLatencyAlarm;
    if (latency) {
      this.completionLatencyAlarm = add(
        this.faninMetric(MetricName.COMPLETION_LATENCY, cloudwatch.Stats.p(99), fiveMinutes).createAlarm(
          this,
          'completion-latency',
          {
            alarmName: `${props.prefix}-completion-latency`,
            alarmDescription: `The p99 of ${MetricName.COMPLETION_LATENCY} (an aggregate's open to its seal) reached ${latency.toSeconds()} s in each of the last 3 five-minute periods: aggregates close later than expected (completionLatencyAlarm).`,
            threshold: latency.toMilliseconds(),
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 3,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          },
        ),
      );
    }

    const tableThrottle = (kind: 'Read' | 'Write'): cloudwatch.Alarm =>
      add(
        props.table
          .metric(`${kind}ThrottleEvents`, { period: fiveMinutes, statistic: cloudwatch.Stats.SUM })
          .createAlarm(this, `table-${kind.toLowerCase()}-throttled`, {
            alarmName: `${props.prefix}-state-${kind.toLowerCase()}-throttled`,
            alarmDescription: `DynamoDB throttled ${kind.toLowerCase()}s of the state table in each of the last 15 minutes' three periods (a hot aggregate or a sudden peak that lasts).`,
            threshold: 1,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 3,
            datapointsToAlarm: 3,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
    this.tableThrottleAlarms = { read: tableThrottle('Read'), write: tableThrottle('Write') };

    const ages: Record<string, cloudwatch.Alarm> = {};
    const ageSeconds = props.oldestMessageAgeAlarm.toSeconds();
    for (const { name, queue, delayed } of props.workingQueues) {
      const threshold = ageSeconds + (delayed ? MAX_SQS_DELAY_SECONDS : 0);
      ages[name] = add(
        queue
          .metricApproximateAgeOfOldestMessage({
            period: Duration.minutes(1),
            statistic: cloudwatch.Stats.MAXIMUM,
          })
          .createAlarm(this, `${name}-oldest-message`, {
            alarmName: `${name.replace(/\.fifo$/, '')}-oldest-message`,
            alarmDescription: `The oldest message of ${name} has waited at least ${threshold} s for 5 minutes: its consumer is stalled, failing or far behind.`,
            threshold,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 5,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
      );
    }
    this.queueAgeAlarms = ages;

    const cycles = (metricName: MetricName, intervalSeconds: number, what: string, id: string) =>
      add(
        this.faninMetric(metricName, cloudwatch.Stats.SUM, Duration.seconds(3 * intervalSeconds)).createAlarm(
          this,
          id,
          {
            alarmName: `${props.prefix}-${id}`,
            alarmDescription: `At least ${FAILED_CYCLES_OF_THREE} of the last 3 ${what} failed (${metricName}): see the handler's log group.`,
            threshold: FAILED_CYCLES_OF_THREE,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          },
        ),
      );
    this.sweepFailureAlarm = cycles(
      MetricName.SWEEP_CYCLES_FAILED,
      props.sweepIntervalSeconds,
      'sweeps',
      'sweeps-failing',
    );
    this.distributorFailureAlarm = cycles(
      MetricName.DISTRIBUTOR_CYCLES_FAILED,
      props.distributorIntervalSeconds,
      'distributor cycles',
      'distributor-cycles-failing',
    );
    this.alarms = alarms;

    // CloudWatch's alarm status widget shows at most 100 alarms: this construct's and the use
    // cases' first, then the queues' own as room allows.
    if (props.dashboard) {
      this.dashboard = this.buildDashboard([...alarms, ...props.existingAlarms].slice(0, MAX_STATUS_ALARMS));
    }
  }

  /** A fanin metric of the whole service (the `[service]` dimension set the handlers publish). */
  public faninMetric(
    metricName: MetricName,
    statistic: string,
    period = Duration.minutes(1),
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { [MetricDimension.SERVICE]: this.props.serviceName },
      statistic,
      period,
    });
  }

  /**
   * An alarm of this stack by the ARN its name gives, rather than by `Fn::GetAtt`: every fanin alarm
   * has a name known at synth, and an ARN that needs no attribute of the alarm resource deploys on
   * implementations that create alarms without attributes (moto). The dashboard depends on the alarm,
   * so it is created after it.
   */
  private byName(alarm: cloudwatch.IAlarm, index: number): cloudwatch.IAlarm {
    const name = (alarm.node.defaultChild as cloudwatch.CfnAlarm | undefined)?.alarmName;
    if (typeof name !== 'string' || Token.isUnresolved(name)) return alarm;
    const arn = Stack.of(this).formatArn({
      service: 'cloudwatch',
      resource: 'alarm',
      resourceName: name,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    this.dashboardDependencies.push(alarm);
    return cloudwatch.Alarm.fromAlarmArn(this, `StatusAlarm${index}`, arn);
  }

  private readonly dashboardDependencies: cloudwatch.IAlarm[] = [];

  private buildDashboard(alarms: readonly cloudwatch.IAlarm[]): cloudwatch.Dashboard {
    const props = this.props;
    const minute = Duration.minutes(1);
    const sum = (name: MetricName): cloudwatch.Metric => this.faninMetric(name, cloudwatch.Stats.SUM);
    const perDefinition = (name: MetricName, label: string): cloudwatch.MathExpression =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{${METRICS_NAMESPACE},${MetricDimension.SERVICE},${MetricDimension.DEFINITION}} MetricName="${name}" ${MetricDimension.SERVICE}="${props.serviceName}"', 'Sum', 60)`,
        label,
        period: minute,
      });
    const functions = Object.entries(props.functions);
    const byFunction = (metric: (fn: lambda.IFunction) => cloudwatch.Metric): cloudwatch.IMetric[] =>
      functions.map(([role, fn]) => metric(fn).with({ label: role, period: minute }));
    const graph = (title: string, left: cloudwatch.IMetric[], width = 8): cloudwatch.GraphWidget =>
      new cloudwatch.GraphWidget({ title, left, width, height: 6 });

    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      // Dashboards are global to an account, alarms regional: the region keeps two deployments
      // of one prefix in two regions apart.
      dashboardName: `${props.prefix}-fanin-${Stack.of(this).region}`,
      defaultInterval: Duration.hours(3),
    });
    dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `# fanin \`${props.prefix}\`\nAggregates, replies and completions from the handlers' metrics (namespace \`${METRICS_NAMESPACE}\`, ${MetricDimension.SERVICE} \`${props.serviceName}\`); Lambda, SQS and DynamoDB from their own. See docs/observability.md.`,
        width: 24,
        height: 2,
      }),
    );
    dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({
        title: 'Alarms',
        alarms: alarms.map((a, i) => this.byName(a, i)),
        width: 24,
        height: 4,
      }),
    );
    dashboard.addWidgets(
      graph('Aggregates', [
        sum(MetricName.AGGREGATES_OPENED),
        sum(MetricName.AGGREGATES_COMPLETED),
        sum(MetricName.AGGREGATES_TIMED_OUT),
        sum(MetricName.AGGREGATES_PURGED),
        sum(MetricName.AGGREGATES_FAILED),
      ]),
      graph('Replies', [
        sum(MetricName.REPLIES_RECORDED),
        sum(MetricName.REPLIES_DUPLICATE),
        sum(MetricName.REPLIES_LATE),
        sum(MetricName.REPLIES_UNKNOWN),
        sum(MetricName.HEARTBEATS_KEPT),
        sum(MetricName.HEARTBEATS_IGNORED),
        sum(MetricName.RETRIES_SENT),
        sum(MetricName.FAILED_REPLIES_RETRIED),
        sum(MetricName.CANCELLATIONS_SENT),
      ]),
      graph('Completion latency (ms)', [
        this.faninMetric(MetricName.COMPLETION_LATENCY, cloudwatch.Stats.p(50)),
        this.faninMetric(MetricName.COMPLETION_LATENCY, cloudwatch.Stats.p(99)),
      ]),
    );
    dashboard.addWidgets(
      graph('Completed per definition', [perDefinition(MetricName.AGGREGATES_COMPLETED, '')]),
      graph('Timed out per definition', [perDefinition(MetricName.AGGREGATES_TIMED_OUT, '')]),
      graph('Completions and cycles in trouble', [
        sum(MetricName.COMPLETIONS_STUCK),
        sum(MetricName.COMPLETIONS_LEASE_EXPIRED),
        sum(MetricName.COMPLETIONS_RESUMED),
        sum(MetricName.DUE_ITEMS_FAILED),
        sum(MetricName.SWEEP_CYCLES_FAILED),
        sum(MetricName.DISTRIBUTOR_CYCLES_FAILED),
      ]),
    );
    dashboard.addWidgets(
      graph(
        'Lambda errors',
        byFunction((fn) => fn.metricErrors({ statistic: cloudwatch.Stats.SUM })),
      ),
      graph(
        'Lambda throttles',
        byFunction((fn) => fn.metricThrottles({ statistic: cloudwatch.Stats.SUM })),
      ),
      graph(
        'Lambda duration p99 (ms)',
        byFunction((fn) => fn.metricDuration({ statistic: cloudwatch.Stats.p(99) })),
      ),
    );
    dashboard.addWidgets(
      graph(
        'Age of the oldest message (s)',
        props.workingQueues.map(({ name, queue }) =>
          queue.metricApproximateAgeOfOldestMessage({
            label: name,
            period: minute,
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
        ),
      ),
      graph(
        'Reply partitions and backlog: visible messages',
        props.replyQueues.map((queue) =>
          queue.metricApproximateNumberOfMessagesVisible({
            period: minute,
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
        ),
      ),
      graph(
        'Dead-letter queues: visible messages',
        props.deadLetterQueues.map((queue) =>
          queue.metricApproximateNumberOfMessagesVisible({
            period: minute,
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
        ),
      ),
    );
    dashboard.addWidgets(
      graph(
        'State table: consumed capacity',
        [
          props.table.metricConsumedReadCapacityUnits({ period: minute, statistic: cloudwatch.Stats.SUM }),
          props.table.metricConsumedWriteCapacityUnits({ period: minute, statistic: cloudwatch.Stats.SUM }),
        ],
        12,
      ),
      graph(
        'State table: throttle events',
        [
          props.table.metric('ReadThrottleEvents', { period: minute, statistic: cloudwatch.Stats.SUM }),
          props.table.metric('WriteThrottleEvents', { period: minute, statistic: cloudwatch.Stats.SUM }),
        ],
        12,
      ),
    );
    for (const alarm of this.dashboardDependencies) dashboard.node.addDependency(alarm);
    return dashboard;
  }
}
