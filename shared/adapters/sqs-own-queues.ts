import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { WireAttribute } from '../engine/correlation.ts';
import type { RawMessage } from '../ports.ts';

/**
 * The messages fanin sends to its own queues to go on with work in another invocation: a request
 * put back on the ingress queue (`FaninContext.requeue`), and a control command's continuation on
 * the control queue (`FaninContext.continueControl`).
 */

/** Puts a request back on the ingress queue, under the identity it first came with. */
export function requeueTo(sqs: SQSClient, ingressQueueUrl: string): (message: RawMessage) => Promise<void> {
  return async (message) => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: ingressQueueUrl,
        MessageBody: message.body,
        MessageAttributes: Object.fromEntries(
          Object.entries({
            ...message.attributes,
            // The copy keeps the request's identity (its request id when it names none).
            [WireAttribute.ORIGIN_MESSAGE_ID]:
              message.attributes[WireAttribute.ORIGIN_MESSAGE_ID] || message.messageId,
          }).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
        ),
      }),
    );
  };
}

/** Sends a control command's continuation (`complete`/`purge` of a whole definition, from its cursor). */
export function continueOn(sqs: SQSClient, controlQueueUrl: string): (body: string) => Promise<void> {
  return async (body) => {
    await sqs.send(new SendMessageCommand({ QueueUrl: controlQueueUrl, MessageBody: body }));
  };
}
