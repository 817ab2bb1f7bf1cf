import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { Alarm } from '../shared/ports.ts';
import type { FaninFunction } from './fanin-function.ts';
import type { FaninFunctions } from './fanin-props.ts';

/** The CloudWatch namespace of the use cases' alarm metrics (`<prefix>-<alarm>`). */
export const ALARM_NAMESPACE = 'fanin';

const ALARM_DESCRIPTIONS: Readonly<Record<Alarm, string>> = {
  [Alarm.OUTPUT_CHANNEL_FAILED]: 'an output channel keeps failing; the other outputs were not re-sent',
  [Alarm.DUE_ITEM_FAILED]: 'a due item failed in the sweeper and was set aside',
  [Alarm.COMPLETION_STUCK]: 'a completion could not be finished',
};

/**
 * The alarms the use cases raise: the handlers log them at error level with the JSON field
 * `alarm` (shared/ports.ts); every handler's log group feeds one metric per alarm value, and each
 * metric has its alarm.
 */
export function createUseCaseAlarms(
  scope: Construct,
  prefix: string,
  functions: FaninFunctions,
  alarmActions: readonly cloudwatch.IAlarmAction[],
): Record<Alarm, cloudwatch.Alarm> {
  const alarmScope = new Construct(scope, 'UseCaseAlarms');
  const useCaseAlarms = {} as Record<Alarm, cloudwatch.Alarm>;
  for (const value of Object.values(Alarm)) {
    const metricName = `${prefix}-${value}`;
    for (const [name, fn] of Object.entries(functions) as [string, FaninFunction][]) {
      new logs.MetricFilter(alarmScope, `${name}-${value}`, {
        logGroup: fn.logGroup,
        filterPattern: logs.FilterPattern.stringValue('$.alarm', '=', value),
        metricNamespace: ALARM_NAMESPACE,
        metricName,
        metricValue: '1',
      });
    }
    const alarm = new cloudwatch.Metric({
      namespace: ALARM_NAMESPACE,
      metricName,
      statistic: cloudwatch.Stats.SUM,
      period: Duration.minutes(5),
    }).createAlarm(alarmScope, value, {
      alarmName: metricName,
      alarmDescription: `A fanin handler logged alarm "${value}" (${ALARM_DESCRIPTIONS[value]}): see its log group for the aggregate.`,
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    for (const action of alarmActions) alarm.addAlarmAction(action);
    useCaseAlarms[value] = alarm;
  }
  return useCaseAlarms;
}
