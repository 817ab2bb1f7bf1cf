import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { stateLifeSeconds } from '../../../shared/engine/definition.ts';
import { DEFINITIONS, logicalId, synthFanin } from './synth.ts';

const DAY = 24 * 3600;

type Resource = { Properties: Record<string, unknown> };

/**
 * The claim-check bucket keeps a stored body (a reply's, a held reply's, a request's) as long as
 * the aggregate that references it can be open, then its tombstone retention: the lifecycle rule
 * follows the longest deadline any definition allows, a request's own `parameters` included.
 */
describe('the bucket lifecycle follows the longest deadline a request may ask for', () => {
  it('GIVEN a definition whose requests may ask for a 300-day deadline WHEN synthesized THEN claim-checked objects expire no sooner than 300 days plus the 30-day tombstone retention', () => {
    // Mutant killed: "state life from the definition's own timeoutSeconds only" (stateLifeSeconds ignores requestParameters.timeoutSeconds.max).
    const contract = {
      name: 'contract',
      fanOut: { type: 'none' as const },
      completion: { strategy: 'all' as const },
      timeoutSeconds: 60,
      requestParameters: { timeoutSeconds: { min: 10, max: 300 * DAY } },
    };
    const { stack, fanin, template } = synthFanin({ definitions: [...DEFINITIONS, contract] });
    const bucket = template.findResources('AWS::S3::Bucket')[logicalId(stack, fanin.bucket)] as Resource;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    const days = rules.flatMap((r) => (typeof r.ExpirationInDays === 'number' ? [r.ExpirationInDays] : []));
    expect(days.length).toBeGreaterThan(0);
    // 300 days open at most, then 30 days of tombstone retention (the default), then a day's margin.
    for (const d of days) expect(d).toBeGreaterThanOrEqual(331);
  });
});

describe('claim-check objects outlive the state that references them', () => {
  it('GIVEN the defaults WHEN synthesized THEN every expiration rule of the bucket is at least ceil(stateLifeSeconds / 1 day) + 1 days and covers every prefix', () => {
    // Mutant killed: "payloadExpiration defaults to 14 days" (329f56a), shorter than the 44 days a
    // tombstone-retained aggregate may reference a stored body.
    const { stack, fanin, template } = synthFanin();
    const minimum = Math.ceil(fanin.topology.stateLifeSeconds / DAY) + 1;
    expect(minimum).toBe(46);
    const bucket = template.findResources('AWS::S3::Bucket')[logicalId(stack, fanin.bucket)] as Resource;
    const rules = (bucket.Properties.LifecycleConfiguration as { Rules: Record<string, unknown>[] }).Rules;
    const expiring = rules.filter((r) => r.ExpirationInDays !== undefined || r.ExpirationDate !== undefined);
    expect(expiring.length).toBeGreaterThan(0);
    for (const rule of expiring) {
      expect(rule.ExpirationDate).toBeUndefined();
      expect(rule.ExpirationInDays as number).toBeGreaterThanOrEqual(minimum);
      // No filter narrower than the whole bucket could leave incoming/, state/ or outputs/ to another rule.
      expect(rule.Prefix ?? '').toBe('');
      expect(rule.TagFilters).toBeUndefined();
    }
  });

  it('GIVEN a definition whose state lives longer WHEN synthesized THEN the default expiration grows with it', () => {
    // Mutant killed: "a constant expiration" (any fixed number of days).
    const long = {
      name: 'slow',
      completion: { strategy: 'all' as const },
      maxOpenSeconds: 90 * DAY,
      tombstoneRetentionSeconds: 60 * DAY,
    };
    const { fanin, template } = synthFanin({ definitions: [...DEFINITIONS, long] });
    const life = stateLifeSeconds(
      fanin.topology.definitions.get('slow')!,
      fanin.topology.completionLeaseSeconds,
    );
    expect(fanin.topology.stateLifeSeconds).toBe(life);
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: Math.ceil(life / DAY) + 1 })]),
      },
    });
  });
});
