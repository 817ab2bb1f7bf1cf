import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { ownSenderId } from '../../../local/sender-id.ts';
import { clientsOver, DynamoDbModel, SqsModel } from '../../../sim/models/index.ts';

/**
 * How the local runtime learns the `SenderId` SQS gives its own messages, over the simulation's SQS
 * model (which names every sender by its account, as the emulators do): one message on a probe
 * queue of its own, received back, the queue deleted after; undefined when the endpoint does not
 * say. The runtime's integration tests ask the emulators.
 */

function models(accountId = '123456789012') {
  const clock = () => Date.now();
  return clientsOver({
    sqs: new SqsModel({ clock, random: Math.random, accountId }),
    dynamodb: new DynamoDbModel({ clock, random: Math.random }),
  });
}

describe('ownSenderId', () => {
  it('is the SenderId the endpoint gives a message this process sent, the probe queue deleted after', async () => {
    const { sqs } = models();

    expect(await ownSenderId(sqs, 'p')).toBe('123456789012');

    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    expect(QueueUrls.filter((u) => u.endsWith('p-sender-probe'))).toEqual([]);
  });

  it('is undefined when the endpoint names no sender, and the probe queue is deleted all the same', async () => {
    const { sqs } = models();
    const send = sqs.send.bind(sqs);
    // An endpoint that strips system attributes from what it returns.
    Object.assign(sqs, {
      send: async (command: { constructor: { name: string } }) => {
        const result = (await send(command as never)) as { Messages?: { Attributes?: unknown }[] };
        for (const message of result?.Messages ?? []) message.Attributes = {};
        return result;
      },
    });

    expect(await ownSenderId(sqs, 'p')).toBeUndefined();
    const { QueueUrls = [] } = await send(new ListQueuesCommand({}));
    expect(QueueUrls.filter((u) => u.endsWith('p-sender-probe'))).toEqual([]);
  });
});
