import {
  CreateEventBusCommand,
  DeleteEventBusCommand,
  DeleteRuleCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aws } from '../../support/clients.ts';
import { requireEventBridge } from '../../support/eventbridge.ts';
import { FaninUnderTest } from '../../support/fanin.ts';

/**
 * A definition with `outputs.eventBridge` also publishes its outputs as events on the bus
 * (source `fanin`, detail-type = the output type), so any EventBridge rule can route them.
 *
 * moto (or LocalStack) serves EventBridge and delivers matched events to an SQS queue of its
 * own; that queue is read through the EventBridge endpoint, which on moto serves SQS as well.
 */
describe('EventBridge outputs', () => {
  let fanin: FaninUnderTest;
  const bus = `fanin-bus-${Date.now().toString(36)}`;
  // The SQS that EventBridge delivers to: the same endpoint as EventBridge (moto or LocalStack).
  const busSqs = new SQSClient({
    ...(process.env.AWS_ENDPOINT_URL_EVENTBRIDGE
      ? { endpoint: process.env.AWS_ENDPOINT_URL_EVENTBRIDGE }
      : {}),
    useQueueUrlAsEndpoint: false,
  });
  let queueUrl = '';

  beforeAll(async () => {
    fanin = await FaninUnderTest.start([
      {
        name: 'evented',
        fanOut: { type: 'none' },
        completion: { strategy: 'all' },
        outputs: { eventBridge: true },
      },
    ]);
  });
  afterAll(async () => {
    await fanin.stop();
  });

  it('a completed aggregate is published on the bus as a fanin event that a rule can route', async (context) => {
    if (!(await requireEventBridge(context))) return;
    // Prepare
    const eb = aws.eventBridge;
    await eb.send(new CreateEventBusCommand({ Name: bus }));
    queueUrl = (await busSqs.send(new CreateQueueCommand({ QueueName: `${bus}-sink` }))).QueueUrl ?? '';
    const { Attributes } = await busSqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await eb.send(
      new PutRuleCommand({
        Name: `${bus}-completed`,
        EventBusName: bus,
        EventPattern: JSON.stringify({ source: ['fanin'], 'detail-type': ['fanin.aggregate.completed'] }),
      }),
    );
    await eb.send(
      new PutTargetsCommand({
        Rule: `${bus}-completed`,
        EventBusName: bus,
        Targets: [{ Id: 'sink', Arn: Attributes?.QueueArn }],
      }),
    );
    fanin.eventBusName = bus;
    fanin.buildContext();

    // Act
    await fanin.sendRequest({ definition: 'evented', aggregateId: 'ev-1', expected: 1 });
    await fanin.drain();
    await fanin.sendReply({ ok: true }, { 'fanin-aggregate-id': 'ev-1', 'fanin-reply-id': '0' });
    await fanin.drain();

    // Assess
    const { Messages = [] } = await busSqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 2 }),
    );
    expect(Messages).toHaveLength(1);
    const event = JSON.parse(Messages[0]?.Body ?? '{}');
    expect(event).toMatchObject({
      source: 'fanin',
      'detail-type': 'fanin.aggregate.completed',
      detail: { aggregateId: 'ev-1', id: 'ev-1/result', result: [{ replyId: '0', body: { ok: true } }] },
    });
    expect(await fanin.outputs('completed')).toHaveLength(1);

    await eb.send(new RemoveTargetsCommand({ Rule: `${bus}-completed`, EventBusName: bus, Ids: ['sink'] }));
    await eb.send(new DeleteRuleCommand({ Name: `${bus}-completed`, EventBusName: bus }));
    await eb.send(new DeleteEventBusCommand({ Name: bus }));
    await busSqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
  });
});
