import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { BANKS, exampleDefinitions, FaninStack, prefixOfStackName } from '../../../infra/fanin-stack.ts';
import type { Resource } from './synth.ts';
import { testApp } from './synth.ts';

/**
 * The example stack (docs/configuration.md, "Names and outputs" and "Changing names of a deployed
 * stack"): its prefix is the stack's name in lower case (`Fanin` keeps `fanin`), it holds the loan
 * broker's five bank queues beside the construct, and it keeps its `PayloadBucket` output.
 */

describe("the example stack's prefix", () => {
  it('GIVEN the stack names Fanin and FaninDev WHEN no prefix is given THEN the prefixes are fanin and fanindev', () => {
    expect(prefixOfStackName('Fanin')).toBe('fanin');
    expect(prefixOfStackName('FaninDev')).toBe('fanindev');
    expect(prefixOfStackName('Shop-Eu-2')).toBe('shop-eu-2');
  });

  it('GIVEN a stack name longer than 31 characters or not starting with a letter WHEN no prefix is given THEN it throws asking for the prefix prop', () => {
    expect(() => prefixOfStackName('A'.repeat(32))).toThrow(/gives no fanin prefix .*pass the prefix prop/);
    expect(() => prefixOfStackName('A'.repeat(31))).not.toThrow();
    expect(() => prefixOfStackName('9lives')).toThrow(/stack name "9lives" gives no fanin prefix/);
  });
});

describe('the example stack synthesized', () => {
  let stack: FaninStack;
  let template: Template;
  beforeAll(() => {
    stack = new FaninStack(testApp(), 'Fanin');
    template = Template.fromStack(stack);
  }, 120_000);

  it('GIVEN the stack Fanin WHEN synthesized THEN its fanin has the prefix fanin and the example definitions', () => {
    expect(stack.fanin.topology.prefix).toBe('fanin');
    expect([...stack.fanin.topology.definitions.keys()].sort()).toEqual(['loan-broker', 'order-approval']);
    template.hasOutput('PayloadBucket', {});
  });

  it('GIVEN the stack WHEN synthesized THEN the five bank queues exist, each with its DLQ and without a DLQ alarm', () => {
    expect(BANKS).toHaveLength(5);
    const names = (Object.values(template.findResources('AWS::SQS::Queue')) as Resource[]).map((q) =>
      String(q.Properties.QueueName),
    );
    const alarms = (Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Resource[]).map((a) =>
      String(a.Properties.AlarmName),
    );
    for (let i = 1; i <= 5; i += 1) {
      expect(names).toContain(`fanin-bank-${i}`);
      expect(names).toContain(`fanin-bank-${i}-dlq`);
      expect(alarms.filter((a) => a.includes(`bank-${i}`))).toEqual([]);
    }
    expect(stack.banks.every((b) => b.dlqAlarm === undefined)).toBe(true);
  });

  it("GIVEN a prefix WHEN the example definitions are built THEN the loan broker fans out to that prefix's five banks", () => {
    const [broker] = exampleDefinitions('shop');
    expect(broker?.fanOut).toEqual({
      type: 'recipient-list',
      recipients: ['shop-bank-1', 'shop-bank-2', 'shop-bank-3', 'shop-bank-4', 'shop-bank-5'],
    });
  });
});
