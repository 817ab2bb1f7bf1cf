import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { Fanin, type FaninProps } from '../../../infra/fanin.ts';
import { DEFINITIONS, logicalId, render, testApp } from './synth.ts';

/**
 * The external-event rules deliver control input: they take only events put by the accounts the
 * deployment allows to send control commands, and a bus of the app refuses those events' sources
 * to any principal `controlSenders` does not list.
 */

const OPERATOR = 'arn:aws:iam::111122223333:role/fanin-operator';
const PARTNER = '444455556666';

function synth(props: Partial<FaninProps>, withBus = false) {
  const stack = new Stack(testApp(), 'Test', { env: { account: '999988887777', region: 'us-east-1' } });
  const bus = withBus ? new events.EventBus(stack, 'Shop', { eventBusName: 'shop' }) : undefined;
  const fanin = new Fanin(stack, 'Fanin', {
    definitions: DEFINITIONS,
    ...(bus ? { externalEventBus: bus } : {}),
    ...props,
  });
  return { stack, fanin, template: Template.fromStack(stack), bus };
}

function patternOf(s: ReturnType<typeof synth>): Record<string, unknown> {
  const rule = s.fanin.externalEventRules.get('approval');
  if (!rule) throw new Error('no approval rule');
  const resource = s.template.toJSON().Resources[logicalId(s.stack, rule)];
  return resource.Properties.EventPattern as Record<string, unknown>;
}

describe('external-event rules: only the allowed senders', { timeout: 60_000 }, () => {
  it("GIVEN no controlSenders WHEN synthesized THEN the rule matches the definition's pattern and only events of fanin's own account", () => {
    // Mutant killed: "rule pattern without account" (fencedEventPattern returning the pattern as
    // it is): an event put by any account the bus accepts would complete aggregates.
    expect(patternOf(synth({}))).toEqual({
      source: ['shop.orders'],
      'detail-type': ['OrderApproved'],
      account: ['999988887777'],
    });
  });

  it('GIVEN controlSenders with a role ARN and an account WHEN synthesized THEN the rule matches only events of those accounts', () => {
    // Mutant killed: "principal ARNs' accounts ignored" (externalEventAccounts without the ARN case).
    const s = synth({ controlSenders: [OPERATOR, PARTNER] });
    expect((patternOf(s).account as string[]).sort()).toEqual(['111122223333', PARTNER]);
  });

  it('GIVEN controlSenders naming only a topic WHEN the construct is created THEN it throws: no event could pass', () => {
    expect(() => synth({ controlSenders: ['arn:aws:sns:us-east-1:111122223333:ops'] })).toThrow(
      /controlSenders names no account, IAM principal or role/,
    );
  });

  it('GIVEN a definition pattern naming an account controlSenders does not allow WHEN the construct is created THEN it throws naming it', () => {
    const definitions = DEFINITIONS.map((d) =>
      d.name === 'approval'
        ? { ...d, externalEventPattern: { ...d.externalEventPattern, account: ['123456789012'] } }
        : d,
    );
    expect(() => synth({ definitions, controlSenders: [OPERATOR] })).toThrow(
      /externalEventPattern.account names \["123456789012"\]/,
    );
  });

  it('GIVEN controlSenders and a bus of the app WHEN synthesized THEN the bus denies putting events of the rules’ sources to every principal not listed', () => {
    // Mutant killed: "no bus policy" (fenceExternalEventBus not called): any principal of an
    // allowed account could put an event that completes an aggregate.
    const s = synth({ controlSenders: [OPERATOR, PARTNER] }, true);
    const policies = Object.values(s.template.findResources('AWS::Events::EventBusPolicy'));
    const statements = policies.map((p) => p.Properties.Statement as Record<string, unknown>);
    const deny = statements.find((st) => st.Sid === 'cdk-OnlyControlSendersPutExternalEvents');
    expect(deny).toMatchObject({ Effect: 'Deny', Action: 'events:PutEvents', Principal: { AWS: '*' } });
    expect(deny?.Condition).toEqual({
      StringEquals: { 'events:source': ['shop.orders'] },
      StringNotLike: { 'aws:PrincipalArn': [OPERATOR] },
      StringNotEquals: { 'aws:PrincipalAccount': [PARTNER] },
    });
    expect(render(deny?.Resource)).toBe(`<${logicalId(s.stack, s.bus as never)}.Arn>`);
  });

  it('GIVEN controlSenders and an imported bus WHEN synthesized THEN no bus policy is written (the owner fences it) and the rule still filters by account', () => {
    const stack = new Stack(testApp(), 'Test', { env: { account: '999988887777', region: 'us-east-1' } });
    const bus = events.EventBus.fromEventBusArn(
      stack,
      'Bus',
      'arn:aws:events:us-east-1:999988887777:event-bus/shop',
    );
    const role = iam.Role.fromRoleArn(stack, 'Operator', OPERATOR);
    const fanin = new Fanin(stack, 'Fanin', {
      definitions: DEFINITIONS,
      externalEventBus: bus,
      controlSenders: [role],
    });
    const template = Template.fromStack(stack);
    expect(template.findResources('AWS::Events::EventBusPolicy')).toEqual({});
    const rule = fanin.externalEventRules.get('approval');
    expect(
      template.toJSON().Resources[logicalId(stack, rule as never)].Properties.EventPattern.account,
    ).toEqual(['111122223333']);
  });
});
