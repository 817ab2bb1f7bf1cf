import { describe, expect, it } from 'vitest';
import { checkEnvironmentSize, maxReplyPartitionsThatFit } from '../../../infra/environment-check.ts';
import { ENV_BUDGET_BYTES, environmentSizeBound } from '../../../infra/handler-environment.ts';
import { describeTopology } from '../../../shared/topology/topology.ts';
import { construct, DEFINITIONS } from './synth.ts';

/**
 * The synth check of the handlers' environment against Lambda's 4 KB (docs/configuration.md, "How
 * many reply partitions fit"): 25 partitions with the default prefix, fewer with a longer prefix or
 * recipient accounts, and an error that says how many fit.
 */

const topology = (replyPartitions: number, prefix = 'fanin') =>
  describeTopology({ definitions: DEFINITIONS, replyPartitions, prefix });

describe('how many reply partitions fit in the handlers environment', () => {
  it('GIVEN the default prefix WHEN the construct is created THEN 25 partitions fit and 26 are refused, naming 25', () => {
    expect(construct({ replyPartitions: 25 })).not.toThrow();
    expect(construct({ replyPartitions: 26 })).toThrow(
      /replyPartitions 26 with prefix "fanin" .* over the 3840 bytes allowed \(Lambda's 4096-byte limit less a 256-byte margin\): at most 25 reply partitions fit/,
    );
  });

  it('GIVEN a longer prefix or recipient accounts WHEN counted THEN fewer partitions fit, and the count is the largest whose environment is within the budget', () => {
    const long = topology(30, 'a-much-longer-fanin-prefix-name');
    const fit = maxReplyPartitionsThatFit(long);
    expect(fit).toBeGreaterThan(0);
    expect(fit).toBeLessThan(25);
    const sizeWith = (count: number) =>
      environmentSizeBound({ ...long, replyPartitions: long.replyPartitions.slice(0, count) });
    expect(sizeWith(fit)).toBeLessThanOrEqual(ENV_BUDGET_BYTES);
    expect(sizeWith(fit + 1)).toBeGreaterThan(ENV_BUDGET_BYTES);
    const accounts = Array.from({ length: 10 }, (_, i) => String(100000000000 + i));
    expect(maxReplyPartitionsThatFit(topology(30), { recipientAccounts: accounts })).toBeLessThan(25);
  });

  it('GIVEN a topology that fits WHEN checked THEN nothing is thrown; GIVEN one that does not THEN the message names the partitions, the prefix and the recipient accounts given', () => {
    expect(() => checkEnvironmentSize(topology(25))).not.toThrow();
    expect(() => checkEnvironmentSize(topology(40))).toThrow(
      /replyPartitions 40 with prefix "fanin" .*at most 25 reply partitions fit .*\(given 0 recipient accounts\)/,
    );
  });

  it('GIVEN so many recipient accounts that not one partition fits WHEN checked THEN it says so instead of a count', () => {
    const accounts = Array.from({ length: 400 }, (_, i) => String(100000000000 + i));
    expect(maxReplyPartitionsThatFit(topology(1), { recipientAccounts: accounts })).toBe(0);
    expect(() => checkEnvironmentSize(topology(1), { recipientAccounts: accounts })).toThrow(
      /not even one reply partition fits .*\(given 400 recipient accounts\)/,
    );
  });
});
