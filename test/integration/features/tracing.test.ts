import type { SQSClient } from '@aws-sdk/client-sqs';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFanOutHandler } from '../../../functions/handlers.ts';
import { createClients } from '../../../shared/aws/clients.ts';
import { FaninClient } from '../../../shared/client/fanin-client.ts';
import { validTraceHeader, withTraceHeader } from '../../../shared/observability/trace-context.ts';
import { createTracer, tracingEnabled } from '../../../shared/observability/tracing.ts';
import { aws } from '../../support/clients.ts';
import { FaninUnderTest } from '../../support/fanin.ts';
import { ingressRecord } from '../../support/sqs-records.ts';

/** A well-formed X-Ray trace header, as SQS hands it to Lambda in `attributes.AWSTraceHeader`. */
const TRACE = 'Root=1-67891233-abcdef012345678912345678;Parent=53995c3f42cd8ad8;Sampled=1';

/** A message the system sent: its queue and the `AWSTraceHeader` it carried. */
interface Sent {
  readonly queueUrl: string;
  readonly trace: string | undefined;
}

/** Records what each SendMessage(Batch) of `sqs` carried, in order (a middleware reading the command input). */
function recordTraceHeaders(sqs: SQSClient): Sent[] {
  const seen: Sent[] = [];
  sqs.middlewareStack.remove('recordTraceHeaders');
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      type WithTrace = { MessageSystemAttributes?: { AWSTraceHeader?: { StringValue?: string } } };
      const input = args.input as WithTrace & { QueueUrl: string; Entries?: WithTrace[] };
      const trace = (m: WithTrace) => m.MessageSystemAttributes?.AWSTraceHeader?.StringValue;
      if (context.commandName === 'SendMessageCommand')
        seen.push({ queueUrl: input.QueueUrl, trace: trace(input) });
      if (context.commandName === 'SendMessageBatchCommand')
        for (const entry of input.Entries ?? []) seen.push({ queueUrl: input.QueueUrl, trace: trace(entry) });
      return next(args);
    },
    { step: 'initialize', name: 'recordTraceHeaders' },
  );
  return seen;
}

/**
 * The trace from producer to result: a request's `AWSTraceHeader` is passed on to its
 * sub-requests and its outputs. fauxqs 1.9.2 accepts the `MessageSystemAttributes` of SendMessage
 * and SendMessageBatch but keeps none of them (a receive never returns `AWSTraceHeader`), and no
 * emulator here records X-Ray segments: so these tests read what the real SQS client sent to the
 * emulator (the command input, by a middleware on that client), and that the emulator took it.
 */
describe('tracing', () => {
  let fanin: FaninUnderTest;
  let warehouse: string;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'order',
        fanOut: { type: 'splitter', itemsPath: '$.items', target: 'placeholder' },
        completion: { strategy: 'all' },
        timeoutSeconds: 60,
      },
      { name: 'empty', fanOut: { type: 'none' }, completion: { strategy: 'all' } },
    ]);
    warehouse = await fanin.targetQueue('warehouse');
    const order = fanin.topology.definitions.get('order');
    if (order?.fanOut?.type === 'splitter') Object.assign(order.fanOut, { target: warehouse });
  });
  afterAll(() => fanin.stop());

  /** The fan-out entry point's handler invoked as Lambda would, with one record. */
  async function invokeFanOut(body: unknown, trace: string | undefined): Promise<void> {
    const event: SQSEvent = {
      Records: [ingressRecord(`m-${Math.random().toString(36).slice(2)}`, body, trace)],
    };
    const response = await makeFanOutHandler(() => fanin.ctx)(event);
    expect(response.batchItemFailures).toEqual([]);
  }

  it("a request's trace header goes on with each of its sub-requests, and the emulator takes them", async () => {
    // Prepare
    const seen = recordTraceHeaders(fanin.clients.sqs);

    // Act
    await invokeFanOut({ definition: 'order', aggregateId: 'o-1', items: [{ n: 1 }, { n: 2 }] }, TRACE);

    // Assess
    const subRequests = seen.filter((m) => m.queueUrl === fanin.targetUrl(warehouse));
    expect(subRequests.map((m) => m.trace)).toEqual([TRACE, TRACE]);
    expect(await fanin.takeRequests(warehouse)).toHaveLength(2);
  });

  it("a request's trace header goes on with the result it completes at once", async () => {
    // Prepare
    const seen = recordTraceHeaders(fanin.clients.sqs);

    // Act: nothing to wait for, so it completes in the fan-out's own invocation.
    await invokeFanOut({ definition: 'empty', aggregateId: 'e-1', expected: 0 }, TRACE);

    // Assess
    const results = seen.filter((m) => m.queueUrl === fanin.provisioned.queueUrls.completed);
    expect(results.map((m) => m.trace)).toEqual([TRACE]);
    expect((await fanin.outputs('completed')).map((o) => o.aggregateId)).toContain('e-1');
  });

  it('a request without a trace header sends none, and the next record does not inherit one', async () => {
    // Prepare
    const seen = recordTraceHeaders(fanin.clients.sqs);
    await invokeFanOut({ definition: 'order', aggregateId: 'o-2', items: [{ n: 1 }] }, TRACE);

    // Act
    await invokeFanOut({ definition: 'order', aggregateId: 'o-3', items: [{ n: 1 }] }, undefined);

    // Assess
    const subRequests = seen.filter((m) => m.queueUrl === fanin.targetUrl(warehouse));
    expect(subRequests.map((m) => m.trace)).toEqual([TRACE, undefined]);
    expect(await fanin.takeRequests(warehouse)).toHaveLength(2);
  });

  it("a producer's trace header goes with its request, and a responder's reply carries its sub-request's on (FaninClient)", async () => {
    // Prepare
    const seen = recordTraceHeaders(fanin.clients.sqs);
    const client = new FaninClient({
      sqs: fanin.clients.sqs,
      ingressQueueUrl: fanin.provisioned.queueUrls.ingress,
    });
    const replyTo = fanin.provisioned.replyQueueUrls[0] ?? '';

    // Act
    await client.sendRequest('order', { aggregateId: 'o-4', items: [] }, { traceHeader: TRACE });
    await client.reply(
      {
        queueUrl: fanin.targetUrl(warehouse),
        receiptHandle: 'r',
        messageId: 'm',
        body: {},
        aggregateId: 'o-4',
        replyId: '0',
        replyTo,
        faninAttributes: { 'fanin-aggregate-id': 'o-4', 'fanin-reply-id': '0', 'fanin-reply-to': replyTo },
        traceHeader: TRACE,
      },
      { ok: true },
    );

    // Assess
    expect(seen).toEqual([
      { queueUrl: fanin.provisioned.queueUrls.ingress, trace: TRACE },
      { queueUrl: replyTo, trace: TRACE },
    ]);
    await fanin.drain();
  });

  it('a trace header that is not in the X-Ray format is dropped, never passed on', () => {
    // Kills the mutant "pass the attribute on as it came".
    expect(validTraceHeader(TRACE)).toBe(TRACE);
    expect(validTraceHeader('Root=1-2-3;Parent=4\nInjected: yes')).toBeUndefined();
    expect(validTraceHeader(`Root=${'a'.repeat(600)}`)).toBeUndefined();
    expect(withTraceHeader('not a header', () => withTraceHeader(undefined, () => 1))).toBe(1);
  });

  it('tracing is off unless POWERTOOLS_TRACE_ENABLED=true, whatever Powertools defaults to', async () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ POWERTOOLS_TRACE_ENABLED: 'false' })).toBe(false);
    expect(tracingEnabled({ POWERTOOLS_TRACE_ENABLED: 'TRUE' })).toBe(true);
    expect(await createTracer({})).toBeUndefined();
  });

  it("with tracing on, an entry point's AWS clients are captured by the X-Ray middleware", async () => {
    // Prepare: a Lambda environment (Powertools traces only there) with tracing on.
    const saved = process.env.AWS_EXECUTION_ENV;
    process.env.AWS_EXECUTION_ENV = 'AWS_Lambda_nodejs20.x';
    try {
      const tracer = await createTracer({
        POWERTOOLS_TRACE_ENABLED: 'true',
        POWERTOOLS_SERVICE_NAME: 'fanin',
      });
      if (!tracer) throw new Error('no tracer');

      // Act: as shared/app.ts builds a Lambda function's clients once tracing is set up.
      const clients = createClients({ instrument: (client) => tracer.captureAWSv3Client(client) });

      // Assess
      expect(tracer.isTracingEnabled()).toBe(true);
      expect(clients.sqs.middlewareStack.identify().join(' ')).toContain('XRaySDKInstrumentation');
      expect(clients.dynamo.middlewareStack.identify().join(' ')).toContain('XRaySDKInstrumentation');
      clients.destroy();
    } finally {
      if (saved === undefined) delete process.env.AWS_EXECUTION_ENV;
      else process.env.AWS_EXECUTION_ENV = saved;
    }
  });

  it('the emulator takes a message sent with a trace header (fauxqs 1.9.2 keeps none; AWS returns it as AWSTraceHeader)', async () => {
    const url = fanin.targetUrl(warehouse);
    await withTraceHeader(TRACE, () =>
      fanin.ctx.sender.send([
        { target: warehouse, body: '{}', attributes: {}, deduplicationId: 'd', groupId: 'g' },
      ]),
    );
    const { Messages = [] } = await aws.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MessageSystemAttributeNames: ['AWSTraceHeader'],
        WaitTimeSeconds: 1,
      }),
    );
    expect(Messages.map((m) => m.Body)).toEqual(['{}']);
    expect([undefined, TRACE]).toContain(Messages[0]?.Attributes?.AWSTraceHeader);
  });
});
