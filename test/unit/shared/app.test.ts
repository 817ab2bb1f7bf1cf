import { describe, expect, it } from 'vitest';
import { createContext, powertoolsLog } from '../../../shared/app.ts';
import type { RuntimeConfig } from '../../../shared/config.ts';
import { QueueRole } from '../../../shared/topology/topology.ts';
import { clientsOver, DynamoDbModel, S3Model, SqsModel } from '../../../sim/models/index.ts';

/**
 * The composition root: a configuration and the SDK clients wired into the use cases' context
 * (docs/architecture.md). Its own fast test: createContext calls no AWS API, so the clients are
 * the SDK's over the simulation's models and nothing is sent. The integration suites run every
 * use case through it against the emulators.
 */
const ACCOUNT = '123456789012';
const url = (name: string) => `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/${name}`;

function aConfig(extra: Partial<RuntimeConfig> = {}): RuntimeConfig {
  const queueUrls = Object.fromEntries(
    Object.values(QueueRole).map((role) => [
      role,
      url(`fanin-${role}${role === 'completed' ? '.fifo' : ''}`),
    ]),
  ) as RuntimeConfig['queueUrls'];
  return {
    tableName: 'fanin-state',
    queueUrls,
    replyQueueUrls: [url('fanin-reply-0'), url('fanin-reply-1')],
    definitions: new Map(),
    ...extra,
  };
}

function someClients(withS3 = false) {
  const options = { clock: () => 0, random: () => 0.5 };
  const clients = clientsOver({
    sqs: new SqsModel(options),
    dynamodb: new DynamoDbModel(options),
    ...(withS3 ? { s3: new S3Model(options) } : {}),
  });
  return { sqs: clients.sqs, dynamo: clients.dynamo, ...(clients.s3 ? { s3: clients.s3 } : {}) };
}

describe('createContext', () => {
  it('refuses a configuration that names a claim-check bucket when no S3 client is given', () => {
    expect(() => createContext(aConfig({ bucketName: 'fanin-payloads' }), someClients())).toThrow(
      'the configuration names the claim-check bucket fanin-payloads but no S3 client was given',
    );
  });

  it('stores payloads in the bucket only when the configuration names one', () => {
    expect(createContext(aConfig(), someClients()).payloads).toBeUndefined();
    expect(
      createContext(aConfig({ bucketName: 'fanin-payloads' }), someClients(true)).payloads,
    ).toBeDefined();
  });

  it("never lets a request name one of fanin's own queues, or their dead-letter queues, as a recipient", () => {
    // Act
    const { recipients } = createContext(aConfig(), someClients());

    // Assess: every role's queue and every reply partition, and the DLQ of each (FIFO ones keep .fifo last)
    expect(recipients.ownAccount).toBe(ACCOUNT);
    expect(recipients.region).toBe('eu-west-1');
    expect(recipients.ownQueues).toEqual(
      expect.arrayContaining([
        'fanin-ingress',
        'fanin-ingress-dlq',
        'fanin-control',
        'fanin-completed.fifo',
        'fanin-completed-dlq.fifo',
        'fanin-reply-0',
        'fanin-reply-1-dlq',
      ]),
    );
    expect(recipients.accounts).toEqual([]);
  });

  it('takes the further recipient accounts, the trusted movers and the lease from the configuration', () => {
    // Act
    const ctx = createContext(
      aConfig({
        recipientAccounts: ['210987654321'],
        trustedMovers: ['AROAEXAMPLE'],
        completionLeaseSeconds: 300,
      }),
      someClients(),
    );

    // Assess
    expect(ctx.recipients.accounts).toEqual(['210987654321']);
    expect(ctx.trustedMovers).toEqual(['AROAEXAMPLE']);
    expect(ctx.completionLeaseMs).toBe(300_000);
  });

  it("leases a completion for 120 s unless told otherwise (a 30 s function timeout's lease)", () => {
    expect(createContext(aConfig(), someClients()).completionLeaseMs).toBe(120_000);
  });

  it('lets the caller replace any part, such as the clock', () => {
    // Act
    const ctx = createContext(aConfig(), someClients(), { clock: () => 42 });

    // Assess
    expect(ctx.clock()).toBe(42);
    expect(ctx.definitions.size).toBe(0);
  });
});

describe('powertoolsLog', () => {
  it('passes each line to the logger at its level, with its fields (none as an empty object)', () => {
    // Arrange
    const lines: [string, string, unknown][] = [];
    const logger = {
      info: (message: string, fields: unknown) => lines.push(['info', message, fields]),
      warn: (message: string, fields: unknown) => lines.push(['warn', message, fields]),
      error: (message: string, fields: unknown) => lines.push(['error', message, fields]),
    };

    // Act
    const log = powertoolsLog(logger as never);
    log.info('aggregate opened', { aggregateId: 'a-1' });
    log.warn('late reply');
    log.error('output failed', { reason: 'throttled' });

    // Assess
    expect(lines).toEqual([
      ['info', 'aggregate opened', { aggregateId: 'a-1' }],
      ['warn', 'late reply', {}],
      ['error', 'output failed', { reason: 'throttled' }],
    ]);
  });
});
