import type { SQSRecord } from 'aws-lambda';

/**
 * An ingress message as Lambda's SQS event source hands it to a function: for tests that invoke a
 * handler factory directly, as Lambda would, instead of through a poller.
 */
export function ingressRecord(messageId: string, body: unknown, trace?: string): SQSRecord {
  return {
    messageId,
    receiptHandle: 'r',
    body: JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
      ...(trace !== undefined ? { AWSTraceHeader: trace } : {}),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:ingress',
    awsRegion: 'us-east-1',
  };
}
