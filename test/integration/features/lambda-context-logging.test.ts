import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { instrumented, makeReplyHandler } from '../../../functions/handlers.ts';
import { PowertoolsMetricsAdapter } from '../../../shared/adapters/powertools-metrics.ts';
import { powertoolsLog } from '../../../shared/app.ts';
import { newExecutionEnvironment } from '../../../shared/observability/logger.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * Every line a Lambda invocation logs carries its Lambda context: the entry point
 * (`instrumented`, functions/handlers.ts) adds it to the function's one Powertools Logger, the one
 * the use cases' log (`powertoolsLog()`) writes to. The handler runs against the emulators; the
 * Lambda context is the plain object Lambda passes, built here.
 */

/** The context Lambda gives an invocation of the reply function. */
function lambdaContext(requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'fanin-test-Reply',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:fanin-test-Reply',
    memoryLimitInMB: '512',
    awsRequestId: requestId,
    logGroupName: '/aws/lambda/fanin-test-Reply',
    logStreamName: '2026/12/02/[$LATEST]0123456789abcdef',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** A reply as the reply partition's event source delivers it. */
function replyRecord(aggregateId: string, replyId: string): SQSRecord {
  return {
    messageId: `m-${aggregateId}-${replyId}`,
    receiptHandle: 'r',
    body: JSON.stringify({ value: 1 }),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'AIDA',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {
      'fanin-aggregate-id': { stringValue: aggregateId, dataType: 'String' },
      'fanin-reply-id': { stringValue: replyId, dataType: 'String' },
    },
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:eu-west-1:123456789012:fanin-reply-0',
    awsRegion: 'eu-west-1',
  };
}

/** The JSON lines written while `run` runs (stdout and stderr), parsed; other output is dropped. */
async function capture(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const chunks: string[] = [];
  const keep = (chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  };
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation(keep),
    vi.spyOn(process.stderr, 'write').mockImplementation(keep),
  ];
  try {
    await run();
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return chunks
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => typeof line.message === 'string');
}

describe('logs carry the Lambda context', () => {
  let fanin: FaninUnderTest;

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      { name: 'plain', fanOut: { type: 'none' }, completion: { strategy: 'all' }, timeoutSeconds: 60 },
    ]);
  });
  afterAll(() => fanin.stop());

  it('each line of an invocation carries its request id, the function name and ARN, and cold start on the first only', async () => {
    // GIVEN the reply function's entry point as Lambda runs it (an on-demand execution environment,
    // as Lambda's AWS_LAMBDA_INITIALIZATION_TYPE says), logging with the function's logger
    vi.stubEnv('AWS_LAMBDA_INITIALIZATION_TYPE', 'on-demand');
    // A new execution environment: a file run before this one in the same worker may have
    // invoked a handler on the function's logger already.
    newExecutionEnvironment();
    fanin.buildContext({ log: powertoolsLog() });
    const metrics = new PowertoolsMetricsAdapter({ definitions: ['plain'], serviceName: 'fanin' });
    const handler = instrumented(
      'reply',
      makeReplyHandler(() => fanin.ctx),
      () => ({ metrics }),
    );
    try {
      // WHEN it is invoked twice, with a reply each time
      const first = await capture(() =>
        handler({ Records: [replyRecord('ctx-1', '0')] } as SQSEvent, lambdaContext('request-1')),
      );
      const second = await capture(() =>
        handler({ Records: [replyRecord('ctx-2', '0')] } as SQSEvent, lambdaContext('request-2')),
      );

      // THEN every line of the first names the first request, the function, and a cold start
      expect(first.map((l) => l.message)).toContain('reply batch');
      for (const line of first) {
        expect(line, String(line.message)).toMatchObject({
          function_request_id: 'request-1',
          function_name: 'fanin-test-Reply',
          function_arn: 'arn:aws:lambda:eu-west-1:123456789012:function:fanin-test-Reply',
          function_memory_size: '512',
          cold_start: true,
        });
      }
      // AND every line of the second names the second request, no longer a cold start
      expect(second.map((l) => l.message)).toContain('reply batch');
      for (const line of second) {
        expect(line, String(line.message)).toMatchObject({
          function_request_id: 'request-2',
          function_name: 'fanin-test-Reply',
          cold_start: false,
        });
      }
    } finally {
      vi.unstubAllEnvs();
      fanin.buildContext();
    }
  });
});
