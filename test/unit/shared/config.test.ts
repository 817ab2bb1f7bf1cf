import { describe, expect, it } from 'vitest';
import { ConfigEnv, ConfigurationError, configToEnv, loadConfig } from '../../../shared/config.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';

/** A handler's configuration, read from the environment the construct (or the runtime) writes. */
describe('loadConfig', () => {
  const env = configToEnv({
    tableName: 'fanin-state',
    queueUrls: Object.fromEntries(
      Object.values(QueueRole).map((role) => [role, `https://q/${role}`]),
    ) as never,
    replyQueueUrls: ['https://q/reply-0'],
    definitions: [],
  });

  it('reads back what configToEnv wrote', () => {
    const config = loadConfig(env);
    expect(config.tableName).toBe('fanin-state');
    expect(config.replyQueueUrls).toEqual(['https://q/reply-0']);
  });

  it.each([
    ['a missing table', { [ConfigEnv.TABLE]: undefined }, 'FANIN_TABLE is not set'],
    [
      'a queue role without a URL',
      { [ConfigEnv.QUEUES]: JSON.stringify({ ingress: 'x' }) },
      'FANIN_QUEUES has no URL for queue role "control"',
    ],
    [
      'no reply queue',
      { [ConfigEnv.REPLY_QUEUES]: '[]' },
      'FANIN_REPLY_QUEUES must be a non-empty JSON array of queue URLs',
    ],
    [
      'definitions that are not an array',
      { [ConfigEnv.DEFINITIONS]: '{}' },
      'FANIN_DEFINITIONS must be a JSON array',
    ],
    [
      'a fractional lease',
      { [ConfigEnv.LEASE_SECONDS]: '1.5' },
      'FANIN_LEASE_SECONDS must be a positive integer (given "1.5")',
    ],
    [
      'a threshold that is no number',
      { [ConfigEnv.CLAIM_CHECK_THRESHOLD]: 'big' },
      'FANIN_CLAIM_CHECK_THRESHOLD must be a positive integer (given "big")',
    ],
    [
      'an account id of 11 digits',
      { [ConfigEnv.RECIPIENT_ACCOUNTS]: '["12345678901"]' },
      'FANIN_RECIPIENT_ACCOUNTS must be a JSON array of 12-digit account ids',
    ],
  ])('refuses %s, naming the variable', (_, change, message) => {
    expect(() => loadConfig({ ...env, ...change })).toThrow(new ConfigurationError(message));
  });
});
