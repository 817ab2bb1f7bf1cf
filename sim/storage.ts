import type { SQSRecord } from 'aws-lambda';
import type { FaninClients } from '../shared/app.ts';
import { QueueRole, type QueueSpec, type Topology } from '../shared/topology/topology.ts';
import type { DeadLetter } from './ledger.ts';
import {
  clientsOver,
  DynamoDbModel,
  EventBridgeModel,
  type Intercept,
  S3Model,
  SqsModel,
} from './models/index.ts';
import type { Random } from './random.ts';

/**
 * The models of one run (sim/models/) and the world's own access to them: provisioning the
 * topology (table, queues with their DLQs and redrive, bucket, bus), the producers' and
 * responders' sends and receives (never faulted: they are not fanin's calls), and what the
 * invariants read at the end.
 */

export interface Models {
  readonly dynamodb: DynamoDbModel;
  readonly sqs: SqsModel;
  readonly s3: S3Model;
  readonly eventBridge: EventBridgeModel;
}

const DAY_SECONDS = 24 * 3600;

/** The models over one clock and one seed; the bucket's lifecycle as the stack sets it. */
export function createModels(clock: () => number, random: Random, topology: Topology): Models {
  const draw = () => random.next();
  // infra/validate-props.ts: objects live the longest state life, rounded up to days, plus a day.
  const days = Math.ceil(topology.stateLifeSeconds / DAY_SECONDS) + 1;
  return {
    dynamodb: new DynamoDbModel({ clock, random: draw }),
    sqs: new SqsModel({ clock, random: draw }),
    s3: new S3Model({ clock, random: draw, expireAfterDays: { '': days } }),
    eventBridge: new EventBridgeModel({ clock, random: draw }),
  };
}

/** SDK clients whose `send(command)` goes through `intercept` to the models (S3 only with a bucket). */
export function modelClients(models: Models, intercept: Intercept, withS3: boolean): FaninClients {
  const { s3: _s3, ...rest } = models;
  return clientsOver(withS3 ? models : rest, streamed(intercept));
}

/**
 * The S3 model's GetObject body reads with `transformToString` only; the claim check now reads it
 * as a stream (`for await`, to stop at its size bound). Until the model's body is iterable too,
 * the answer is given one async iterator over the same bytes.
 */
function streamed(intercept: Intercept): Intercept {
  return (service, command, input, call) => {
    if (service !== 's3' || command !== 'GetObjectCommand') return intercept(service, command, input, call);
    return intercept(service, command, input, () => {
      const answer = call() as { Body?: { transformToByteArray(): Promise<Uint8Array> } & object };
      const body = answer.Body;
      if (body === undefined || Symbol.asyncIterator in body) return answer;
      return {
        ...answer,
        Body: Object.assign(body, {
          async *[Symbol.asyncIterator]() {
            yield await body.transformToByteArray();
          },
        }),
      };
    });
  };
}

/** A message as the world receives it. */
export interface Received {
  readonly MessageId: string;
  readonly ReceiptHandle: string;
  readonly Body: string;
  readonly MessageAttributes: Record<string, string>;
  readonly ReceiveCount: number;
  readonly SentAt: number;
}

/**
 * A received message as Lambda's SQS event source hands it to a handler (`senderId` stands for
 * the producer: the simulation's or the test kit's).
 */
export function eventRecordOf(message: Received, queueName: string, senderId: string): SQSRecord {
  return {
    messageId: message.MessageId,
    receiptHandle: message.ReceiptHandle,
    body: message.Body,
    attributes: {
      ApproximateReceiveCount: String(message.ReceiveCount),
      SentTimestamp: String(message.SentAt),
      SenderId: senderId,
      ApproximateFirstReceiveTimestamp: String(message.SentAt),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes).map(([name, value]) => [
        name,
        { stringValue: value, dataType: 'String' },
      ]),
    ) as SQSRecord['messageAttributes'],
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: 'us-east-1',
  };
}

export class Storage {
  public readonly queueUrls: Record<QueueRole, string>;
  public readonly replyQueueUrls: string[];
  public readonly eventBusName = 'sim-bus';
  private readonly dlqUrls: string[] = [];
  private readonly urls = new Map<string, string>();
  private objects = 0;

  public constructor(
    private readonly models: Models,
    private readonly topology: Topology,
    private readonly bucket: boolean,
    bus: boolean,
    targets: readonly string[],
  ) {
    models.dynamodb.createTable(topology.table);
    if (bucket) models.s3.handle('CreateBucketCommand', { Bucket: topology.bucketName });
    if (bus) models.eventBridge.handle('CreateEventBusCommand', { Name: this.eventBusName });
    const queueUrls: Record<string, string> = {};
    for (const [role, spec] of Object.entries(topology.queues)) queueUrls[role] = this.create(spec);
    this.queueUrls = queueUrls as Record<QueueRole, string>;
    this.replyQueueUrls = topology.replyPartitions.map((spec) => this.create(spec));
    for (const name of targets)
      this.urls.set(name, this.sqs('CreateQueueCommand', { QueueName: name }).QueueUrl as string);
  }

  private sqs(command: string, input: unknown): Record<string, unknown> {
    return this.models.sqs.handle(command, input) as Record<string, unknown>;
  }

  private create(spec: QueueSpec): string {
    const dlq = this.sqs('CreateQueueCommand', {
      QueueName: spec.dlqName,
      Attributes: spec.fifo ? { FifoQueue: 'true' } : {},
    }).QueueUrl as string;
    this.dlqUrls.push(dlq);
    const arn = (
      this.sqs('GetQueueAttributesCommand', { QueueUrl: dlq, AttributeNames: ['QueueArn'] })
        .Attributes as Record<string, string>
    ).QueueArn;
    const url = this.sqs('CreateQueueCommand', {
      QueueName: spec.name,
      Attributes: {
        ...(spec.fifo ? { FifoQueue: 'true' } : {}),
        VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn, maxReceiveCount: spec.maxReceiveCount }),
      },
    }).QueueUrl as string;
    this.urls.set(spec.name, url);
    return url;
  }

  /** The URL of a queue by name. */
  public urlOf(name: string): string {
    const url = this.urls.get(name);
    if (url === undefined) throw new Error(`no queue ${name}`);
    return url;
  }

  /** A producer's send; by claim check (the body in the bucket under `incoming/`) when asked. Returns the message id. */
  public send(
    url: string,
    body: string,
    attributes: Readonly<Record<string, string>>,
    claimCheck: boolean,
  ): string {
    const MessageAttributes: Record<string, { DataType: string; StringValue: string }> = Object.fromEntries(
      Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
    );
    let MessageBody = body;
    if (claimCheck && this.bucket) {
      this.objects += 1;
      const key = `incoming/sim-${this.objects}`;
      this.models.s3.handle('PutObjectCommand', { Bucket: this.topology.bucketName, Key: key, Body: body });
      MessageBody = JSON.stringify([
        'software.amazon.payloadoffloading.PayloadS3Pointer',
        { s3BucketName: this.topology.bucketName, s3Key: key },
      ]);
      MessageAttributes.ExtendedPayloadSize = {
        DataType: 'Number',
        StringValue: String(Buffer.byteLength(body)),
      };
    }
    const fifo = url.endsWith('.fifo');
    return this.sqs('SendMessageCommand', {
      QueueUrl: url,
      MessageBody,
      MessageAttributes,
      ...(fifo ? { MessageGroupId: 'sim', MessageDeduplicationId: `sim-${this.objects++}` } : {}),
    }).MessageId as string;
  }

  /** Lambda's poller (or a responder): up to `max` visible messages, redrive applied by the queue. */
  public receive(url: string, max: number, _spec: QueueSpec | undefined): Received[] {
    const out: Received[] = [];
    while (out.length < max) {
      const { Messages = [] } = this.sqs('ReceiveMessageCommand', {
        QueueUrl: url,
        MaxNumberOfMessages: Math.min(10, max - out.length),
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }) as { Messages?: Record<string, unknown>[] };
      for (const m of Messages) {
        const attributes: Record<string, string> = {};
        for (const [name, value] of Object.entries(
          (m.MessageAttributes ?? {}) as Record<string, { StringValue?: string }>,
        )) {
          if (value.StringValue !== undefined) attributes[name] = value.StringValue;
        }
        const system = (m.Attributes ?? {}) as Record<string, string>;
        out.push({
          MessageId: m.MessageId as string,
          ReceiptHandle: m.ReceiptHandle as string,
          Body: m.Body as string,
          MessageAttributes: attributes,
          ReceiveCount: Number(system.ApproximateReceiveCount ?? 1),
          SentAt: Number(system.SentTimestamp ?? 0),
        });
      }
      if (Messages.length < 10) break;
    }
    return out;
  }

  /** Deletes a received message. */
  public remove(url: string, receiptHandle: string): void {
    this.sqs('DeleteMessageCommand', { QueueUrl: url, ReceiptHandle: receiptHandle });
  }

  /** How many messages a queue holds, in flight and delayed included. */
  public depth(url: string): number {
    return this.models.sqs.messages(url).length;
  }

  /** The input queues (not the outputs, not the DLQs) that still hold messages. */
  public leftover(): { queue: string; count: number }[] {
    const inputs = [QueueRole.INGRESS, QueueRole.CONTROL, QueueRole.TIMER, QueueRole.BACKLOG].map(
      (role) => this.queueUrls[role],
    );
    return [...inputs, ...this.replyQueueUrls]
      .map((url) => ({ queue: url.slice(url.lastIndexOf('/') + 1), count: this.depth(url) }))
      .filter((q) => q.count > 0);
  }

  /** Every message left in a dead-letter queue. */
  public deadLetters(): DeadLetter[] {
    return this.dlqUrls.flatMap((queue) =>
      this.models.sqs.messages(queue).map((m) => ({
        queue: queue.slice(queue.lastIndexOf('/') + 1),
        body: m.body,
        attributes: Object.fromEntries(
          Object.entries(m.attributes).map(([n, v]) => [n, v.StringValue ?? '']),
        ),
      })),
    );
  }

  /** The earliest item of the state table's due index, and its aggregate. */
  public nextDue(): { dueAt: number; aggregateId: string } | undefined {
    let next: { dueAt: number; aggregateId: string } | undefined;
    for (const item of this.models.dynamodb.items(this.topology.tableName)) {
      const dueAt = item.dueAt;
      if (typeof dueAt !== 'number' || typeof item.dueShard !== 'string') continue;
      if (next === undefined || dueAt < next.dueAt) next = { dueAt, aggregateId: String(item.pk).slice(2) };
    }
    return next;
  }

  /** An output's text: the payload a claim-check pointer names, else the body itself. */
  public resolve(body: string, attributes: Record<string, { StringValue?: string }> | undefined): string {
    if (attributes?.ExtendedPayloadSize === undefined) return body;
    try {
      const [, pointer] = JSON.parse(body) as [string, { s3BucketName: string; s3Key: string }];
      return this.models.s3.text(pointer.s3BucketName, pointer.s3Key) ?? body;
    } catch {
      return body;
    }
  }
}

export { QueueRole };
