import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  configuredEndpoints,
  createClients,
  createS3Client,
  createSqsClient,
  DOCUMENT_TRANSLATE_CONFIG,
  endpointOverridden,
} from '../../../../shared/aws/clients.ts';

/**
 * The one place clients are made: the configuration each client gets, read back from the client
 * without a request (no network). Endpoints come only from the SDK's standard settings or a
 * Connection the local runtime found; an SQS client never takes a queue URL's host as its
 * endpoint; S3 goes path-style behind an endpoint override; retries are the SDK's unless an
 * option says otherwise; clients are made on first use and made anew after destroy.
 */

const ENDPOINT_VARIABLES = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_EVENTBRIDGE',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
];

/** No endpoint variable set, whatever the test runner's environment holds. */
function clearEndpoints() {
  for (const name of ENDPOINT_VARIABLES) vi.stubEnv(name, '');
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('endpointOverridden', () => {
  it('is true for AWS_ENDPOINT_URL or the service’s own variable, unless configured endpoints are ignored', () => {
    // Prepare
    clearEndpoints();
    const none = endpointOverridden('SQS');
    vi.stubEnv('AWS_ENDPOINT_URL_SQS', 'http://127.0.0.1:9324');
    const own = [endpointOverridden('SQS'), endpointOverridden('S3')];
    vi.stubEnv('AWS_ENDPOINT_URL', 'http://127.0.0.1:4566');
    const global = endpointOverridden('S3');
    vi.stubEnv('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', 'TRUE');

    // Act / Assess
    expect(none).toBe(false);
    expect(own).toEqual([true, false]);
    expect(global).toBe(true);
    expect(endpointOverridden('SQS')).toBe(false);
  });
});

describe('configuredEndpoints', () => {
  it('takes each service’s own variable first, then AWS_ENDPOINT_URL, and names no service without either', () => {
    // Act
    const endpoints = configuredEndpoints({
      AWS_ENDPOINT_URL: 'http://a:1',
      AWS_ENDPOINT_URL_SQS: 'http://q:2',
    });
    const partial = configuredEndpoints({ AWS_ENDPOINT_URL_S3: 'http://s:3', AWS_ENDPOINT_URL_SQS: '' });

    // Assess
    expect(endpoints).toEqual({
      SQS: 'http://q:2',
      DYNAMODB: 'http://a:1',
      S3: 'http://a:1',
      EVENTBRIDGE: 'http://a:1',
    });
    expect(partial).toEqual({ S3: 'http://s:3' });
  });
});

describe('createSqsClient', () => {
  it('never uses a queue URL as its endpoint, whatever the options say', () => {
    // Act
    const client = createSqsClient({ useQueueUrlAsEndpoint: true } as SQSClientConfig);

    // Assess
    expect(client.config.useQueueUrlAsEndpoint).toBe(false);
    client.destroy();
  });

  it('retries as the SDK does by default (three attempts), and as told when told', async () => {
    // Act
    const standard = createSqsClient({ region: 'us-east-1' });
    const once = createSqsClient({ region: 'us-east-1', maxAttempts: 1 });

    // Assess
    expect(await standard.config.maxAttempts()).toBe(3);
    expect(await once.config.maxAttempts()).toBe(1);
    standard.destroy();
    once.destroy();
  });
});

describe('createS3Client', () => {
  it('goes path-style only behind an endpoint override (an emulator’s host has no bucket subdomains)', () => {
    // Prepare
    clearEndpoints();
    const aws = createS3Client({ region: 'us-east-1' });
    vi.stubEnv('AWS_ENDPOINT_URL_S3', 'http://127.0.0.1:9000');

    // Act
    const local = createS3Client({ region: 'us-east-1' });

    // Assess
    expect(aws.config.forcePathStyle).toBeFalsy();
    expect(local.config.forcePathStyle).toBe(true);
    aws.destroy();
    local.destroy();
  });
});

describe('createClients', () => {
  it('without a connection gives every client no endpoint of its own: the SDK’s standard settings decide', () => {
    // Prepare
    clearEndpoints();

    // Act
    const clients = createClients({ region: 'eu-west-1' });

    // Assess
    for (const client of [clients.sqs, clients.dynamoDb, clients.s3, clients.eventBridge])
      expect(client.config.endpoint).toBeUndefined();
    clients.destroy();
  });

  it('sends each service named in a connection to its endpoint, with its region and credentials', async () => {
    // Prepare
    clearEndpoints();

    // Act
    const clients = createClients({
      endpoints: { SQS: 'http://127.0.0.1:9324', S3: 'http://127.0.0.1:9000' },
      region: 'us-west-2',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });

    // Assess
    const sqsEndpoint = await clients.sqs.config.endpoint?.();
    expect(sqsEndpoint).toMatchObject({ hostname: '127.0.0.1', port: 9324, protocol: 'http:' });
    expect(clients.sqs.config.useQueueUrlAsEndpoint).toBe(false);
    expect(clients.s3.config.forcePathStyle).toBe(true);
    expect(clients.dynamoDb.config.endpoint).toBeUndefined();
    expect(await clients.eventBridge.config.region()).toBe('us-west-2');
    expect((await clients.sqs.config.credentials()).accessKeyId).toBe('test');
    clients.destroy();
  });

  it('makes each client on first use, once, instrumented once; the document client over the DynamoDB one', () => {
    // Prepare
    const instrumented: unknown[] = [];
    const clients = createClients({
      region: 'us-east-1',
      instrument: (client) => {
        instrumented.push(client);
        return client;
      },
    });
    const before = instrumented.length;

    // Act
    const sqs = clients.sqs;
    const again = clients.sqs;
    const dynamo = clients.dynamo;

    // Assess
    expect(before).toBe(0);
    expect(again).toBe(sqs);
    expect(instrumented).toHaveLength(2);
    expect(instrumented[0]).toBe(sqs);
    expect(instrumented[1]).toBe(clients.dynamoDb);
    expect(dynamo.config.translateConfig).toEqual(DOCUMENT_TRANSLATE_CONFIG);
    clients.destroy();
  });

  it('makes a new client after destroy', () => {
    // Prepare
    const clients = createClients({ region: 'us-east-1' });
    const first = clients.sqs;

    // Act
    clients.destroy();
    const second = clients.sqs;

    // Assess
    expect(second).not.toBe(first);
    clients.destroy();
  });
});

describe('DOCUMENT_TRANSLATE_CONFIG', () => {
  it('drops undefined attributes and refuses class instances', () => {
    // Act / Assess
    expect(DOCUMENT_TRANSLATE_CONFIG.marshallOptions).toMatchObject({
      removeUndefinedValues: true,
      convertClassInstanceToMap: false,
    });
  });
});
