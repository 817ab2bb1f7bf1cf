import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../../shared/app.ts';
import { ConfigEnv, configToEnv, loadConfig } from '../../../shared/config.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { logicalId, synthFanin } from './synth.ts';

/**
 * Who may date a moved reply (docs/security.md, "Who may date a reply"): the stack names the
 * distributor's role, by its unique id (the `SenderId` SQS gives the copies it sends, as
 * `<role id>:<session>`), in every handler's `FANIN_TRUSTED_MOVERS`, and no other role; the
 * handlers read it back into their configuration.
 */
describe("the handlers' trusted movers", () => {
  it("name the distributor role's RoleId in the reply and distributor functions, and no other role", () => {
    // GIVEN a synthesized Fanin
    const { stack, fanin, template } = synthFanin();
    const distributorRole = logicalId(stack, fanin.functions.distributor.executionRole);
    const resources = template.toJSON().Resources as Record<
      string,
      { Properties: { Environment?: { Variables: Record<string, unknown> } } }
    >;
    const moversOf = (fn: { node: { defaultChild?: unknown } }) =>
      resources[logicalId(stack, fn)]?.Properties.Environment?.Variables[ConfigEnv.TRUSTED_MOVERS];

    // THEN the reply function (which judges a reply's arrival) and the distributor (which keeps a
    // moved copy's first send time when it moves it again) trust the distributor's role id alone
    // (mutant killed: the reply function's role named instead of the distributor's)
    const expected = { 'Fn::Join': ['', ['["', { 'Fn::GetAtt': [distributorRole, 'RoleId'] }, '"]']] };
    expect(moversOf(fanin.functions.reply)).toEqual(expected);
    expect(moversOf(fanin.functions.distributor)).toEqual(expected);
    // AND every handler carries the same value (one environment)
    for (const fn of Object.values(fanin.functions)) expect(moversOf(fn)).toEqual(expected);
  });

  it('are read back from the environment the stack sets; unset trusts nobody; a malformed one is a configuration error', () => {
    const queueUrls = Object.fromEntries(
      Object.values(QueueRole).map((r) => [r, `https://q/${r}`]),
    ) as Record<QueueRole, string>;
    const base = { tableName: 't', queueUrls, replyQueueUrls: ['https://q/r0'], definitions: [] };
    // (mutant killed: the variable not read into the configuration)
    expect(
      loadConfig(configToEnv({ ...base, trustedMovers: ['AROAEXAMPLEROLEID0001'] })).trustedMovers,
    ).toEqual(['AROAEXAMPLEROLEID0001']);
    expect(loadConfig(configToEnv(base)).trustedMovers).toBeUndefined();
    // AND the handlers' context, which judges a reply's arrival, takes them from the configuration
    const clients = {
      sqs: new SQSClient({ region: 'us-east-1' }),
      dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' })),
    };
    const config = loadConfig(configToEnv({ ...base, trustedMovers: ['AROAEXAMPLEROLEID0001'] }));
    expect(createContext(config, clients).trustedMovers).toEqual(['AROAEXAMPLEROLEID0001']);
    expect(createContext(loadConfig(configToEnv(base)), clients).trustedMovers).toBeUndefined();
    expect(() => loadConfig({ ...configToEnv(base), [ConfigEnv.TRUSTED_MOVERS]: '["a b"]' })).toThrow(
      /FANIN_TRUSTED_MOVERS must be a JSON array of SQS sender ids/,
    );
  });
});
