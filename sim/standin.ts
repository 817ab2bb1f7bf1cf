import { createHash } from 'node:crypto';

/**
 * Small stand-ins for the SQS, S3 and EventBridge models (sim/models/ holds the real ones as they
 * land): the same `handle(commandName, input)` shape, synchronous and deterministic. Only what
 * fanin's adapters and the world call.
 */

const ACCOUNT = '000000000000';
const MAX_MESSAGE_BYTES = 262_144;

function named(name: string, message: string): Error {
  const error = new Error(message);
  error.name = name;
  return error;
}

interface StoredMessage {
  readonly id: string;
  readonly body: string;
  readonly attributes: Record<string, { DataType: string; StringValue?: string }>;
  readonly sentAt: number;
  readonly group?: string;
  visibleAt: number;
  receives: number;
  handle: string;
}

interface Queue {
  readonly name: string;
  readonly url: string;
  readonly fifo: boolean;
  visibilityMs: number;
  readonly messages: StoredMessage[];
  readonly dedup: Map<string, { id: string; at: number }>;
  redrive?: { dlq: string; max: number };
}

/** SQS, standard and FIFO: visibility timeouts, delays, receive counts, redrive, FIFO deduplication. */
export class StandinSqs {
  private readonly queues = new Map<string, Queue>();
  private seq = 0;
  public constructor(private readonly options: { clock: () => number; random: () => number }) {}

  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(command: string, input: any): any {
    const now = this.options.clock();
    switch (command) {
      case 'CreateQueueCommand': {
        const name = input.QueueName as string;
        const url = `https://sqs.us-east-1.amazonaws.com/${ACCOUNT}/${name}`;
        const attributes = (input.Attributes ?? {}) as Record<string, string>;
        if (!this.queues.has(url)) {
          const queue: Queue = {
            name,
            url,
            fifo: name.endsWith('.fifo'),
            visibilityMs: Number(attributes.VisibilityTimeout ?? 30) * 1000,
            messages: [],
            dedup: new Map(),
          };
          if (attributes.RedrivePolicy) {
            const policy = JSON.parse(attributes.RedrivePolicy) as {
              deadLetterTargetArn: string;
              maxReceiveCount: number;
            };
            queue.redrive = {
              dlq: urlOfArn(policy.deadLetterTargetArn),
              max: Number(policy.maxReceiveCount),
            };
          }
          this.queues.set(url, queue);
        }
        return { QueueUrl: url };
      }
      case 'GetQueueUrlCommand': {
        const url = `https://sqs.us-east-1.amazonaws.com/${input.QueueOwnerAWSAccountId ?? ACCOUNT}/${input.QueueName}`;
        if (!this.queues.has(url)) throw named('QueueDoesNotExist', 'The specified queue does not exist.');
        return { QueueUrl: url };
      }
      case 'GetQueueAttributesCommand': {
        const queue = this.queue(input.QueueUrl);
        const visible = queue.messages.filter((m) => m.visibleAt <= now).length;
        return {
          Attributes: {
            QueueArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:${queue.name}`,
            ApproximateNumberOfMessages: String(visible),
            ApproximateNumberOfMessagesNotVisible: String(queue.messages.length - visible),
          },
        };
      }
      case 'SendMessageCommand':
        return this.send(this.queue(input.QueueUrl), input, now);
      case 'SendMessageBatchCommand': {
        const queue = this.queue(input.QueueUrl);
        const entries = input.Entries as { Id: string }[];
        if (entries.length > 10) throw named('TooManyEntriesInBatchRequest', 'at most 10 entries');
        const total = entries.reduce((n, e) => n + size(e as never), 0);
        if (total > MAX_MESSAGE_BYTES) throw named('BatchRequestTooLong', 'batch too long');
        return { Successful: entries.map((e) => ({ Id: e.Id, ...this.send(queue, e, now) })), Failed: [] };
      }
      case 'ReceiveMessageCommand':
        return {
          Messages: this.receive(
            this.queue(input.QueueUrl),
            Number(input.MaxNumberOfMessages ?? 1),
            input.VisibilityTimeout,
            now,
          ),
        };
      case 'DeleteMessageCommand':
        this.remove(this.queue(input.QueueUrl), input.ReceiptHandle);
        return {};
      case 'DeleteMessageBatchCommand': {
        const queue = this.queue(input.QueueUrl);
        const entries = input.Entries as { Id: string; ReceiptHandle: string }[];
        for (const e of entries) this.remove(queue, e.ReceiptHandle);
        return { Successful: entries.map((e) => ({ Id: e.Id })), Failed: [] };
      }
      default:
        throw named('UnsupportedOperation', `the SQS stand-in has no ${command}`);
    }
  }

  /** Every message a queue holds (in flight or delayed included), oldest first. */
  public messages(url: string): readonly StoredMessage[] {
    return this.queue(url).messages;
  }

  private queue(url: string): Queue {
    const queue = this.queues.get(url);
    if (!queue) throw named('QueueDoesNotExist', `no queue ${url}`);
    return queue;
  }

  private send(
    queue: Queue,
    input: Record<string, unknown>,
    now: number,
  ): { MessageId: string; MD5OfMessageBody: string } {
    if (size(input) > MAX_MESSAGE_BYTES) throw named('InvalidParameterValue', 'message too long');
    const body = input.MessageBody as string;
    const md5 = createHash('md5').update(body).digest('hex');
    if (queue.fifo) {
      const key = String(input.MessageDeduplicationId ?? createHash('sha256').update(body).digest('hex'));
      const seen = queue.dedup.get(key);
      if (seen && now - seen.at < 300_000) return { MessageId: seen.id, MD5OfMessageBody: md5 };
    }
    this.seq += 1;
    const id = `m-${this.seq.toString(36)}-${Math.floor(this.options.random() * 1e9).toString(36)}`;
    if (queue.fifo) queue.dedup.set(String(input.MessageDeduplicationId ?? id), { id, at: now });
    queue.messages.push({
      id,
      body,
      attributes: (input.MessageAttributes ?? {}) as StoredMessage['attributes'],
      sentAt: now,
      ...(input.MessageGroupId ? { group: String(input.MessageGroupId) } : {}),
      visibleAt: now + Number(input.DelaySeconds ?? 0) * 1000,
      receives: 0,
      handle: '',
    });
    return { MessageId: id, MD5OfMessageBody: md5 };
  }

  private receive(queue: Queue, max: number, visibility: number | undefined, now: number): unknown[] {
    const out: unknown[] = [];
    let candidates = queue.messages.filter((m) => m.visibleAt <= now);
    // A standard queue returns messages in no particular order; a FIFO queue in order.
    if (!queue.fifo) candidates = candidates.sort(() => this.options.random() - 0.5);
    for (const m of candidates) {
      if (out.length >= Math.min(max, 10)) break;
      if (queue.redrive && m.receives >= queue.redrive.max) {
        const dlq = this.queues.get(queue.redrive.dlq);
        queue.messages.splice(queue.messages.indexOf(m), 1);
        dlq?.messages.push({ ...m, visibleAt: now, receives: 0 });
        continue;
      }
      m.receives += 1;
      this.seq += 1;
      m.handle = `${m.id}#${this.seq}`;
      m.visibleAt = now + (visibility !== undefined ? Number(visibility) * 1000 : queue.visibilityMs);
      out.push({
        MessageId: m.id,
        ReceiptHandle: m.handle,
        Body: m.body,
        MD5OfBody: '',
        MessageAttributes: m.attributes,
        Attributes: { ApproximateReceiveCount: String(m.receives), SentTimestamp: String(m.sentAt) },
      });
    }
    return out;
  }

  private remove(queue: Queue, handle: string): void {
    const index = queue.messages.findIndex((m) => m.handle === handle);
    if (index >= 0) queue.messages.splice(index, 1);
  }
}

function urlOfArn(arn: string): string {
  const [, , , , account, name] = arn.split(':');
  return `https://sqs.us-east-1.amazonaws.com/${account}/${name}`;
}

function size(input: Record<string, unknown>): number {
  let bytes = Buffer.byteLength(String(input.MessageBody ?? ''));
  for (const [name, value] of Object.entries(
    (input.MessageAttributes ?? {}) as Record<string, { DataType?: string; StringValue?: string }>,
  )) {
    bytes +=
      Buffer.byteLength(name) +
      Buffer.byteLength(value.DataType ?? '') +
      Buffer.byteLength(value.StringValue ?? '');
  }
  return bytes;
}

/** S3: buckets of objects; a body reads back with `transformToString` as the SDK's stream does. */
export class StandinS3 {
  public readonly objects = new Map<string, { body: string; at: number }>();
  public constructor(private readonly options: { clock: () => number }) {}

  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(command: string, input: any): any {
    const key = `${input.Bucket}/${input.Key}`;
    if (command === 'PutObjectCommand') {
      this.objects.set(key, { body: String(input.Body), at: this.options.clock() });
      return { ETag: createHash('md5').update(String(input.Body)).digest('hex') };
    }
    if (command === 'GetObjectCommand') {
      const object = this.objects.get(key);
      if (!object) throw named('NoSuchKey', 'The specified key does not exist.');
      const body = object.body;
      return { Body: { transformToString: async () => body }, ContentLength: Buffer.byteLength(body) };
    }
    if (command === 'CreateBucketCommand') return {};
    throw named('UnsupportedOperation', `the S3 stand-in has no ${command}`);
  }
}

/** EventBridge: PutEvents onto named buses, kept in order. */
export class StandinEventBridge {
  public readonly events: { bus: string; source: string; detailType: string; detail: string }[] = [];

  // biome-ignore lint/suspicious/noExplicitAny: commands of every shape pass through here
  public handle(command: string, input: any): any {
    if (command !== 'PutEventsCommand')
      throw named('UnsupportedOperation', `the EventBridge stand-in has no ${command}`);
    const entries = input.Entries as {
      EventBusName: string;
      Source: string;
      DetailType: string;
      Detail: string;
    }[];
    for (const e of entries)
      this.events.push({ bus: e.EventBusName, source: e.Source, detailType: e.DetailType, detail: e.Detail });
    return {
      FailedEntryCount: 0,
      Entries: entries.map((_, i) => ({ EventId: `e-${this.events.length - entries.length + i}` })),
    };
  }
}
