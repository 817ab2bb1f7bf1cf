import { beforeAll, describe, expect, it } from 'vitest';
import { ALARM_NAMESPACE } from '../../../infra/fanin.ts';
import { Alarm } from '../../../shared/ports.ts';
import { logicalId, type Resource, render, type Synth, synthFanin } from './synth.ts';

describe('the alarms the use cases raise', () => {
  let synth: Synth;
  beforeAll(() => {
    synth = synthFanin({ prefix: 'shop' });
  });

  it.each(Object.values(Alarm))(
    'GIVEN the handlers log alarm "%s" WHEN synthesized THEN every handler log group has a metric filter on it into namespace fanin',
    (value) => {
      // Mutant killed: "no metric filter for this alarm value" (329f56a had none).
      const { stack, fanin, template } = synth;
      const filters = Object.values(
        template.findResources('AWS::Logs::MetricFilter', {
          Properties: { FilterPattern: `{ $.alarm = "${value}" }` },
        }),
      ) as Resource[];
      const groups = filters.map((f) => render(f.Properties.LogGroupName));
      expect(groups.sort()).toEqual(
        Object.values(fanin.functions)
          .map((fn) => `<${logicalId(stack, fn.logGroup as never)}>`)
          .sort(),
      );
      for (const filter of filters) {
        expect(filter.Properties.MetricTransformations).toEqual([
          { MetricNamespace: ALARM_NAMESPACE, MetricName: `shop-${value}`, MetricValue: '1' },
        ]);
      }
    },
  );

  it.each(Object.values(Alarm))(
    'GIVEN alarm "%s" WHEN synthesized THEN a CloudWatch alarm fires on one occurrence in 5 minutes',
    (value) => {
      // Mutant killed: "metric without an alarm", "threshold above 1".
      const { fanin, template } = synth;
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `shop-${value}`,
        Namespace: ALARM_NAMESPACE,
        MetricName: `shop-${value}`,
        Statistic: 'Sum',
        Period: 300,
        EvaluationPeriods: 1,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(fanin.alarms).toContain(fanin.useCaseAlarms[value]);
    },
  );
});
