import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POINTER_CLASS } from '../../../shared/adapters/s3-claim-check.ts';
import { SqsRequestSender } from '../../../shared/adapters/sqs-sender.ts';
import { createSqsClient } from '../../../shared/aws/clients.ts';
import { aws } from '../../support/clients.ts';
import {
  type FaninUnderTest as Fanin,
  FaninUnderTest,
  type OutputBody,
  takeAll,
} from '../../support/fanin.ts';

/** What reached the trap: any request at all is a leak. */
interface Hit {
  readonly method: string;
  readonly url: string;
  readonly authorization: string;
  readonly securityToken: string;
}

/** An HTTP server on 127.0.0.1 that records every request it receives and answers 500. */
async function startTrap(): Promise<{ server: Server; port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    hits.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: String(req.headers.authorization ?? ''),
      securityToken: String(req.headers['x-amz-security-token'] ?? ''),
    });
    req.resume();
    res.statusCode = 500;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

/** Runs `fn` with the endpoint overrides removed from the environment (as on AWS), then restores them. */
async function withoutEndpointOverride<T>(fn: () => Promise<T>): Promise<T> {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('AWS_ENDPOINT_URL'));
  for (const [name] of saved) delete process.env[name];
  try {
    return await fn();
  } finally {
    for (const [name, value] of saved) process.env[name] = value;
  }
}

const SECRET = 'SECRET-OF-AGGREGATE-A';

/**
 * Every message and event is untrusted input (docs/security.md): its fields may name another
 * host, another aggregate's definition or another S3 object. None of them may become an
 * endpoint, complete what its definition does not allow, or read what a producer may not.
 */
describe('untrusted input', () => {
  let fanin: Fanin;
  let trap: Awaited<ReturnType<typeof startTrap>>;
  let bank: string;
  let account: string;

  beforeAll(async () => {
    trap = await startTrap();
    fanin = await FaninUnderTest.start(
      [
        { name: 'recipients', fanOut: { type: 'recipient-list' }, completion: { strategy: 'all' } },
        {
          name: 'market',
          fanOut: { type: 'none' },
          completion: { strategy: 'external' },
          externalEventPattern: { source: ['exchange'], 'detail-type': ['MarketClosed'] },
        },
        { name: 'manual', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
      ],
      // Bodies over 10,000 bytes are kept in S3 under state/, outputs over 64 KiB under outputs/.
      { claimCheckThresholdBytes: 64 * 1024, overrides: { maxReplyBytes: 10_000 } },
    );
    bank = await fanin.targetQueue('bank');
    account = new URL(fanin.targetUrl(bank)).pathname.split('/')[1] ?? '';
  });
  afterAll(async () => {
    trap.server.close();
    await fanin.stop();
  });

  describe('a recipient URL never becomes an endpoint', () => {
    it("fanin's SQS client sends to the configured endpoint, never to a QueueUrl's host (kills: useQueueUrlAsEndpoint left to the SDK default)", async () => {
      // Prepare: as on AWS, no endpoint override; the request is recorded instead of sent
      const hosts: string[] = [];
      const requestHandler = {
        handle: async (request: { hostname: string; port?: number }) => {
          hosts.push(`${request.hostname}${request.port ? `:${request.port}` : ''}`);
          throw new Error('recorded, not sent');
        },
        updateHttpClientConfig: () => undefined,
        httpHandlerConfigs: () => ({}),
      };

      // Act
      await withoutEndpointOverride(async () => {
        const sqs = createSqsClient({ region: 'us-east-1', maxAttempts: 1, requestHandler });
        await sqs
          .send(
            new SendMessageCommand({
              QueueUrl: `http://127.0.0.1:${trap.port}/${account}/x`,
              MessageBody: '{}',
            }),
          )
          .catch(() => undefined);
        sqs.destroy();
      });

      // Assess
      expect(hosts).toEqual(['sqs.us-east-1.amazonaws.com']);
      expect(trap.hits).toEqual([]);
    });

    it("the sender resolves a URL target by account and name on the configured endpoint; the URL's host gets nothing (kills: URL targets passed to the SDK as given)", async () => {
      // Prepare: the queue the URL names exists; its host is the trap
      const sqs = createSqsClient();
      const queueUrls: string[] = [];
      sqs.middlewareStack.add(
        (next) => async (args) => {
          const input = args.input as { QueueUrl?: string };
          if (input.QueueUrl) queueUrls.push(input.QueueUrl);
          return next(args);
        },
        { step: 'initialize' },
      );
      const sender = new SqsRequestSender({ sqs });
      const target = `http://127.0.0.1:${trap.port}/${account}/${bank}`;

      // Act
      await sender.send([
        {
          target,
          body: '{"n":1}',
          attributes: { 'fanin-aggregate-id': 's-1' },
          deduplicationId: 'd',
          groupId: 'g',
        },
      ]);

      // Assess
      const delivered = await takeAll(fanin.targetUrl(bank));
      expect(delivered.map((m) => m.Body)).toEqual(['{"n":1}']);
      expect(queueUrls.length).toBeGreaterThan(0);
      expect(queueUrls.filter((url) => url.includes(`:${trap.port}`))).toEqual([]);
      expect(trap.hits).toEqual([]);
      sqs.destroy();
    });

    it('even over an SDK client left at its defaults, the sender sends neither payload nor credentials to the URL host (kills: URL targets passed to the SDK as given)', async () => {
      // Prepare: a client built without fanin's clients.ts (useQueueUrlAsEndpoint: true)
      const sqs = new SQSClient({ maxAttempts: 1 });
      const sender = new SqsRequestSender({ sqs });

      // Act: the send itself may fail (the emulator's own queue URLs name hosts that may not resolve)
      await sender
        .send([
          {
            target: `http://127.0.0.1:${trap.port}/${account}/${bank}`,
            body: '{"secret":true}',
            attributes: {},
            deduplicationId: 'd',
            groupId: 'g',
          },
        ])
        .catch(() => undefined);

      // Assess: no request at all, so no access key id or session token either
      expect(trap.hits).toEqual([]);
      sqs.destroy();
      await takeAll(fanin.targetUrl(bank));
    });

    it("a request whose recipient is a URL of fanin's account on another host reaches the named queue through fanin's endpoint only", async () => {
      // Act
      await fanin.sendRequest({
        definition: 'recipients',
        aggregateId: 'rcpt-1',
        recipients: [`http://127.0.0.1:${trap.port}/${account}/${bank}`],
        payload: { amount: 1 },
      });
      await fanin.drain();

      // Assess
      const subs = await takeAll(fanin.targetUrl(bank));
      expect(subs.map((m) => JSON.parse(m.Body ?? '{}'))).toEqual([{ amount: 1 }]);
      expect(trap.hits).toEqual([]);
    });
    it('a request naming a queue of a foreign account is refused to the error output, naming the recipient (kills: fan-out sends body.recipients unchecked)', async () => {
      // Act: the emulator's GetQueueUrl ignores the owner account, so only the check stops this
      const target = `http://127.0.0.1:${trap.port}/999999999999/${bank}`;
      await fanin.sendRequest({ definition: 'recipients', aggregateId: 'rcpt-2', recipients: [target] });
      await fanin.drain();

      // Assess
      const [error] = await fanin.outputs('error');
      expect(error).toMatchObject({ type: 'fanin.error', source: 'ingress' });
      expect(String(error?.reason)).toContain(`recipient "${target}"`);
      expect(await takeAll(fanin.targetUrl(bank))).toEqual([]);
      expect(await fanin.ctx.store.getHeader('rcpt-2')).toBeUndefined();
      expect(trap.hits).toEqual([]);
    });
  });

  describe("an external event completes only aggregates whose definition's pattern it matches", () => {
    const event = (source: string, aggregateId: string) => ({
      version: '0',
      id: `ev-${source}-${aggregateId}`,
      source,
      'detail-type': 'MarketClosed',
      detail: { aggregateId },
    });

    it('an event naming an aggregate of a definition without externalEventPattern completes nothing and goes to the error output (kills: fromEvent completes detail.aggregateId unchecked)', async () => {
      // Prepare
      await fanin.sendRequest({ definition: 'manual', aggregateId: 'man-1', expected: 3 });
      await fanin.drain();

      // Act: an event that would match market's pattern, naming an aggregate of another definition
      await fanin.sendControl(event('exchange', 'man-1'));
      await fanin.drain();

      // Assess
      expect((await fanin.ctx.store.getHeader('man-1'))?.status).toBe('open');
      expect(await fanin.outputs('completed')).toEqual([]);
      const [error] = await fanin.outputs('error');
      expect(error).toMatchObject({ type: 'fanin.error', source: 'control' });
      expect(String(error?.reason)).toContain('man-1');
      expect(String(error?.reason)).toContain('no externalEventPattern');
    });

    it("an event that does not match its aggregate's pattern completes nothing and goes to the error output (kills: fromEvent completes detail.aggregateId unchecked)", async () => {
      // Prepare
      await fanin.sendRequest({ definition: 'market', aggregateId: 'mkt-1' });
      await fanin.drain();

      // Act
      await fanin.sendControl(event('someone-else', 'mkt-1'));
      await fanin.drain();

      // Assess
      expect((await fanin.ctx.store.getHeader('mkt-1'))?.status).toBe('open');
      expect(await fanin.outputs('completed')).toEqual([]);
      const [error] = await fanin.outputs('error');
      expect(String(error?.reason)).toContain('does not match the externalEventPattern');
    });

    it('a matching event naming an aggregate completes that one only', async () => {
      // Prepare
      await fanin.sendRequest({ definition: 'market', aggregateId: 'mkt-2' });
      await fanin.drain();

      // Act
      await fanin.sendControl(event('exchange', 'mkt-2'));
      await fanin.drain();

      // Assess
      expect((await fanin.outputs('completed')).map((c) => c.aggregateId)).toEqual(['mkt-2']);
      expect((await fanin.ctx.store.getHeader('mkt-1'))?.status).toBe('open');
      expect(await fanin.outputs('status')).toMatchObject([
        { type: 'fanin.control.result', command: 'complete', affected: ['mkt-2'] },
      ]);
      expect(await fanin.outputs('error')).toEqual([]);
    });
  });

  describe('a claim-check pointer names only what a producer may', () => {
    const bucket = () => fanin.provisioned.bucketName ?? '';
    const pointer = (s3BucketName: string, s3Key: string) => ({
      body: JSON.stringify([POINTER_CLASS, { s3BucketName, s3Key }]),
      size: '20000',
    });
    const keysUnder = async (prefix: string) =>
      (
        (await aws.s3.send(new ListObjectsV2Command({ Bucket: bucket(), Prefix: prefix }))).Contents ?? []
      ).map((o) => o.Key ?? '');
    const allOutputs = async (): Promise<OutputBody[]> =>
      (
        await Promise.all(
          (['completed', 'timed-out', 'unknown', 'late', 'error', 'status'] as const).map((role) =>
            fanin.outputs(role),
          ),
        )
      ).flat();

    /** Sends a pointer as a reply to `aggregateId`, the way an Extended Client writes one. */
    const sendPointerReply = async (
      aggregateId: string,
      replyId: string,
      where: { body: string; size: string },
    ) => {
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: fanin.provisioned.replyQueueUrls[0],
          MessageBody: where.body,
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String', StringValue: aggregateId },
            'fanin-reply-id': { DataType: 'String', StringValue: replyId },
            ExtendedPayloadSize: { DataType: 'Number', StringValue: where.size },
          },
        }),
      );
    };

    let stateKey: string;
    let outputKey: string;

    beforeAll(async () => {
      // Aggregate A holds a secret reply body in S3 (state/), and a finished aggregate's large result is under outputs/.
      await fanin.sendRequest({ definition: 'manual', aggregateId: 'cc-a', expected: 2 });
      await fanin.sendRequest({ definition: 'manual', aggregateId: 'cc-out', expected: 1 });
      await fanin.drain();
      await fanin.sendReply(
        { secret: SECRET, pad: 'p'.repeat(20_000) },
        { 'fanin-aggregate-id': 'cc-a', 'fanin-reply-id': 'r1' },
      );
      await fanin.sendReply(
        { secret: SECRET, pad: 'o'.repeat(70_000) },
        { 'fanin-aggregate-id': 'cc-out', 'fanin-reply-id': 'r1' },
      );
      await fanin.drain();
      await allOutputs();
      stateKey = (await keysUnder('state/'))[0] ?? '';
      outputKey = (await keysUnder('outputs/'))[0] ?? '';
    });

    it.each([
      ['another aggregate’s stored body under state/', () => pointer(bucket(), stateKey)],
      ['an output under outputs/', () => pointer(bucket(), outputKey)],
      ['a key outside every prefix', () => pointer(bucket(), 'elsewhere/x')],
      ['a key that climbs out of incoming/', () => pointer(bucket(), `incoming/../${stateKey}`)],
    ])(
      'a reply pointing at %s is refused to the error output, and no result carries its data (kills: decode follows any pointer)',
      async (_, where) => {
        // Prepare
        expect(stateKey).toMatch(/^state\//);
        expect(outputKey).toMatch(/^outputs\//);
        const id = `cc-b-${Math.random().toString(36).slice(2, 8)}`;
        await fanin.sendRequest({ definition: 'manual', aggregateId: id, expected: 1 });
        await fanin.drain();

        // Act
        await sendPointerReply(id, 'r1', where());
        await fanin.drain();

        // Assess
        const outputs = await allOutputs();
        const errors = outputs.filter((o) => o.type === 'fanin.error');
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatchObject({ source: 'reply' });
        expect(String(errors[0]?.reason)).toContain('refused');
        expect(outputs.filter((o) => JSON.stringify(o).includes(SECRET))).toEqual([]);
        expect((await fanin.ctx.store.getHeader(id))?.status).toBe('open');
      },
    );

    it('a pointer into another bucket is refused, on every input queue (kills: decode follows any pointer)', async () => {
      // Prepare: another bucket with an object under the producer prefix
      const other = `${fanin.topology.prefix}-other`;
      await aws.s3.send(new CreateBucketCommand({ Bucket: other }));
      await aws.s3.send(
        new PutObjectCommand({
          Bucket: other,
          Key: 'incoming/x',
          Body: JSON.stringify({ command: 'purge', all: true }),
        }),
      );
      const foreign = pointer(other, 'incoming/x');
      const attributes = { ExtendedPayloadSize: { DataType: 'Number', StringValue: foreign.size } };

      // Act: as a request, a control command and a reply
      for (const queueUrl of [fanin.provisioned.queueUrls.ingress, fanin.provisioned.queueUrls.control]) {
        await aws.sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: foreign.body,
            MessageAttributes: attributes,
          }),
        );
      }
      await sendPointerReply('cc-a', 'r2', foreign);
      await fanin.drain();

      // Assess
      const errors = (await allOutputs()).filter((o) => o.type === 'fanin.error');
      expect(errors.map((e) => e.source).sort()).toEqual(['control', 'ingress', 'reply']);
      for (const error of errors) expect(String(error.reason)).toContain(`s3://${other}/incoming/x refused`);
      expect((await fanin.ctx.store.getHeader('cc-a'))?.status).toBe('open');
      await aws.s3.send(new DeleteObjectCommand({ Bucket: other, Key: 'incoming/x' }));
      await aws.s3.send(new DeleteBucketCommand({ Bucket: other }));
    });

    it('a pointer under incoming/ of fanin’s bucket is read', async () => {
      // Prepare
      await aws.s3.send(
        new PutObjectCommand({ Bucket: bucket(), Key: 'incoming/r2', Body: JSON.stringify({ ok: 2 }) }),
      );

      // Act
      await sendPointerReply('cc-a', 'r2', pointer(bucket(), 'incoming/r2'));
      await fanin.drain();

      // Assess
      const [completed] = await fanin.outputs('completed');
      expect(completed?.aggregateId).toBe('cc-a');
      expect(JSON.stringify(completed)).toContain('"ok":2');
    });
  });
});
