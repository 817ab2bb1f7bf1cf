import { describe, expect, it } from 'vitest';
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
