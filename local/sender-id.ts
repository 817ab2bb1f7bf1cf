import {
  CreateQueueCommand,
  DeleteQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * The `SenderId` SQS gives the messages this process sends: what the local runtime's distributor
 * is, to the reply path, when it moves a reply (its `trustedMovers`, docs/security.md). On AWS a
 * stack names the distributor role's id; locally the runtime's distributor sends with the
 * process's own credentials, so it asks the endpoint once at start: one message on a queue of its
 * own (`<prefix>-sender-probe`), received back with its `SenderId`, the queue deleted after. The
 * emulators the project starts name every sender alike (fauxqs: `000000000000`), so locally a
 * responder's copy is trusted too; LocalStack and AWS answer with the credentials' id.
 *
 * @returns the id, or undefined when the endpoint did not say (the runtime then trusts no mover:
 *   a moved reply arrives when it was moved)
 */
export async function ownSenderId(sqs: SQSClient, prefix: string): Promise<string | undefined> {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}-sender-probe` }));
  try {
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'fanin: which SenderId is mine?' }));
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl,
          MaxNumberOfMessages: 1,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['SenderId'],
        }),
      );
      const sender = Messages[0]?.Attributes?.SenderId;
      if (sender) return sender;
    }
    return undefined;
  } finally {
    await sqs.send(new DeleteQueueCommand({ QueueUrl })).catch(() => undefined);
  }
}
