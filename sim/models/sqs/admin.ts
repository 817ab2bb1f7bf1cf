/**
 * The queue operations of the SQS model: CreateQueue (names, attributes and their ranges, a
 * redrive policy naming an existing DLQ of the same type) and GetQueueAttributes (the counts
 * are exact here, not approximate).
 */
import { QueueNameExists } from '@aws-sdk/client-sqs';
import { sdkError } from '../errors.ts';
import { sqsError } from './messages.ts';
import type { SqsModelCore } from './model.ts';
import { Queue, type QueueSettings } from './queue.ts';

type Request = Record<string, unknown>;

/**
 * CreateQueue: names checked as SQS checks them; an existing queue is returned when the attributes
 * given are the same, refused (QueueNameExists) when they differ.
 */
export function createQueue(model: SqsModelCore, queues: Map<string, Queue>, request: Request): Request {
  const name = String(request.QueueName ?? '');
  const given = { ...((request.Attributes ?? {}) as Record<string, string>) };
  const fifo = given.FifoQueue === 'true';
  const base = fifo ? name.replace(/\.fifo$/, '') : name;
  if (!/^[A-Za-z0-9_-]{1,80}$/.test(base) || name.length > 80 || fifo !== name.endsWith('.fifo')) {
    throw sqsError(
      'InvalidParameterValue',
      fifo || name.endsWith('.fifo')
        ? 'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.'
        : 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
    );
  }
  const key = `${model.accountId}/${name}`;
  const existing = queues.get(key);
  if (existing) {
    const differing = Object.keys(given).find((k) => existing.given[k] !== given[k]);
    if (differing) {
      throw sdkError(
        QueueNameExists,
        `A queue already exists with the same name and a different value for attribute ${differing}`,
      );
    }
    return { QueueUrl: existing.url };
  }
  const settings = settingsOf(model, given, fifo, {
    visibilityTimeoutSeconds: 30,
    retentionSeconds: 345_600,
    delaySeconds: 0,
    maximumMessageSize: model.maxMessageBytes,
    receiveWaitSeconds: 0,
    contentBasedDeduplication: false,
  });
  const url = model.urlOf(name);
  const queue = new Queue(
    name,
    url,
    `arn:aws:sqs:${model.region}:${model.accountId}:${name}`,
    fifo,
    settings,
    given,
    model.clock(),
  );
  queues.set(key, queue);
  return { QueueUrl: url };
}

function settingsOf(
  model: SqsModelCore,
  given: Record<string, string>,
  fifo: boolean,
  defaults: QueueSettings,
): QueueSettings {
  const number = (attribute: string, fallback: number, min: number, max: number) => {
    const text = given[attribute];
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw sqsError('InvalidAttributeValue', `Invalid value for the parameter ${attribute}.`);
    }
    return value;
  };
  let redrive: QueueSettings['redrive'];
  if (given.RedrivePolicy) {
    const policy = JSON.parse(given.RedrivePolicy) as {
      deadLetterTargetArn?: string;
      maxReceiveCount?: number | string;
    };
    const max = Number(policy.maxReceiveCount);
    if (!policy.deadLetterTargetArn || !Number.isInteger(max) || max < 1 || max > 1000) {
      throw sqsError('InvalidAttributeValue', 'Value for parameter RedrivePolicy is invalid.');
    }
    const target = model.queueByArn(policy.deadLetterTargetArn);
    if (!target)
      throw sqsError(
        'InvalidAttributeValue',
        'Value for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist.',
      );
    if (target.fifo !== fifo) {
      throw sqsError(
        'InvalidAttributeValue',
        'Value for parameter RedrivePolicy is invalid. Reason: Dead-letter queue must be same type of queue as the source..',
      );
    }
    redrive = { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: max };
  }
  return {
    visibilityTimeoutSeconds: number('VisibilityTimeout', defaults.visibilityTimeoutSeconds, 0, 43_200),
    retentionSeconds: number('MessageRetentionPeriod', defaults.retentionSeconds, 60, 1_209_600),
    delaySeconds: number('DelaySeconds', defaults.delaySeconds, 0, 900),
    maximumMessageSize: number(
      'MaximumMessageSize',
      defaults.maximumMessageSize,
      1024,
      model.maxMessageBytes,
    ),
    receiveWaitSeconds: number('ReceiveMessageWaitTimeSeconds', defaults.receiveWaitSeconds, 0, 20),
    ...(redrive ? { redrive } : {}),
    contentBasedDeduplication: given.ContentBasedDeduplication === 'true',
  };
}

/** GetQueueAttributes: `All` or the names asked for; an unknown name is refused. */
export function queueAttributes(
  model: SqsModelCore,
  queue: Queue,
  names: readonly string[] = [],
): Record<string, string> {
  const now = model.clock();
  queue.expire(now);
  const counts = queue.counts(now);
  const s = queue.settings;
  const all: Record<string, string> = {
    QueueArn: queue.arn,
    ApproximateNumberOfMessages: String(counts.visible),
    ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
    ApproximateNumberOfMessagesDelayed: String(counts.delayed),
    CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
    LastModifiedTimestamp: String(Math.floor(queue.createdAt / 1000)),
    VisibilityTimeout: String(s.visibilityTimeoutSeconds),
    MaximumMessageSize: String(s.maximumMessageSize),
    MessageRetentionPeriod: String(s.retentionSeconds),
    DelaySeconds: String(s.delaySeconds),
    ReceiveMessageWaitTimeSeconds: String(s.receiveWaitSeconds),
    SqsManagedSseEnabled: 'true',
    ...(s.redrive
      ? {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: s.redrive.deadLetterTargetArn,
            maxReceiveCount: s.redrive.maxReceiveCount,
          }),
        }
      : {}),
    ...(queue.fifo
      ? {
          FifoQueue: 'true',
          ContentBasedDeduplication: String(s.contentBasedDeduplication),
          DeduplicationScope: queue.given.DeduplicationScope ?? 'queue',
          FifoThroughputLimit: queue.given.FifoThroughputLimit ?? 'perQueue',
        }
      : {}),
  };
  if (names.includes('All')) return all;
  const out: Record<string, string> = {};
  for (const name of names) {
    if (
      !(name in all) &&
      ![
        'FifoQueue',
        'ContentBasedDeduplication',
        'RedrivePolicy',
        'DeduplicationScope',
        'FifoThroughputLimit',
        'Policy',
        'KmsMasterKeyId',
      ].includes(name)
    ) {
      throw sqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
    }
    if (all[name] !== undefined) out[name] = all[name];
  }
  return out;
}
