import { Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { Fanin } from '../../../infra/fanin.ts';
import { claimPrefix } from '../../../infra/physical-names.ts';
import { DEFINITIONS, testApp } from './synth.ts';

/**
 * Two fanin instances of one prefix in one app (docs/configuration.md, "Names and outputs"): their
 * queues, table and alarms would have the same names, so the second deployment would fail. In one
 * account and region that is an error at synth; where the accounts or regions are not known, a
 * warning; in two known environments that differ, nothing.
 */

const ENV_A = { account: '111122223333', region: 'eu-west-1' };
const ENV_B = { account: '444455556666', region: 'eu-west-1' };

describe('one prefix per account and region', () => {
  it('GIVEN two Fanin instances of one prefix in one stack WHEN the second is created THEN it throws naming both and the prefix', () => {
    const stack = new Stack(testApp(), 'Test');
    new Fanin(stack, 'First', { definitions: DEFINITIONS, prefix: 'shop' });
    expect(() => new Fanin(stack, 'Second', { definitions: DEFINITIONS, prefix: 'shop' })).toThrow(
      /fanin instance Test\/Second has prefix "shop", as Test\/First has: .*\(shop-\*\) in the same account and region/,
    );
  });

  it('GIVEN two prefixes in two environment-agnostic stacks WHEN claimed THEN neither throws nor warns', () => {
    const app = testApp();
    claimPrefix(new Stack(app, 'A'), 'shop');
    const b = new Stack(app, 'B');
    expect(() => claimPrefix(b, 'shop-eu')).not.toThrow();
    expect(Annotations.fromStack(b).findWarning('*', Match.anyValue())).toHaveLength(0);
  });

  it('GIVEN one prefix in two stacks of one known account and region WHEN claimed THEN the second throws', () => {
    const app = testApp();
    claimPrefix(new Stack(app, 'A', { env: ENV_A }), 'shop');
    expect(() => claimPrefix(new Stack(app, 'B', { env: ENV_A }), 'shop')).toThrow(/same account and region/);
  });

  it('GIVEN one prefix in two stacks of different known accounts WHEN claimed THEN neither throws nor warns', () => {
    const app = testApp();
    claimPrefix(new Stack(app, 'A', { env: ENV_A }), 'shop');
    const b = new Stack(app, 'B', { env: ENV_B });
    expect(() => claimPrefix(b, 'shop')).not.toThrow();
    expect(Annotations.fromStack(b).findWarning('*', Match.anyValue())).toHaveLength(0);
  });

  it('GIVEN one prefix in two environment-agnostic stacks WHEN claimed THEN the second warns (fanin:samePrefix) instead of throwing', () => {
    const app = testApp();
    claimPrefix(new Stack(app, 'A'), 'shop');
    const b = new Stack(app, 'B');
    expect(() => claimPrefix(b, 'shop')).not.toThrow();
    const warnings = Annotations.fromStack(b).findWarning('*', Match.anyValue());
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.entry.data)).toMatch(
      /has prefix "shop", as A has: .*deployed to one account and region, the second would fail/,
    );
    expect(String(warnings[0]?.entry.data)).toContain('fanin:samePrefix');
  });
});
