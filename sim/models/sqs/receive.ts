/**
 * ReceiveMessage of the SQS model: messages past maxReceiveCount move to the dead-letter queue
 * instead of being returned; a standard queue returns visible messages in no particular order,
 * sometimes fewer than it could, and now and then one that another receiver holds (at-least-once
 * delivery); a FIFO queue returns the oldest messages of groups with nothing in flight, in order
 * within each group. Each returned message is in flight for the visibility timeout, with a new
 * receipt handle and its receive count raised.
 */

import { md5OfAttributes, sqsError, wantsAttribute } from './messages.ts';
import type { SqsModelCore } from './model.ts';
import type { Queue, StoredMessage } from './queue.ts';

type Request = Record<string, unknown>;

function bounded(request: Request, name: string, min: number, max: number, fallback: number): number {
  const value = request[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw sqsError(
      'InvalidParameterValue',
      `Value ${String(value)} for parameter ${name} is invalid. Reason: Must be between ${min} and ${max}, if provided.`,
    );
  }
  return n;
}

/** Moves the messages that have been received maxReceiveCount times to the queue's DLQ. */
function redrive(model: SqsModelCore, queue: Queue, now: number): void {
  const policy = queue.settings.redrive;
  if (!policy) return;
  const target = model.queueByArn(policy.deadLetterTargetArn);
  if (!target) return;
  for (const message of queue.visible(now)) {
    if (message.receiveCount < policy.maxReceiveCount) continue;
    queue.remove(message);
    target.messages.push({
      ...message,
      // The receive that found it over the count counts (as fauxqs has it).
      receiveCount: message.receiveCount + 1,
      // A standard DLQ keeps the original enqueue time (retention counts from it); a FIFO one resets it.
      sentAt: target.fifo ? now : message.sentAt,
      visibleAt: now,
      received: false,
      handles: new Set(),
      deadLetterSourceArn: queue.arn,
    });
  }
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function chooseFifo(queue: Queue, now: number, max: number): StoredMessage[] {
  const blocked = new Set<string>();
  for (const m of queue.messages) if (m.visibleAt > now && m.groupId !== undefined) blocked.add(m.groupId);
  const ordered = [...queue.messages].sort((a, b) =>
    (a.sequenceNumber ?? '') < (b.sequenceNumber ?? '') ? -1 : 1,
  );
  const groups: string[] = [];
  for (const m of ordered)
    if (m.groupId !== undefined && !blocked.has(m.groupId) && !groups.includes(m.groupId))
      groups.push(m.groupId);
  const chosen: StoredMessage[] = [];
  for (const group of groups) {
    for (const m of ordered) {
      if (chosen.length >= max) return chosen;
      if (m.groupId === group) chosen.push(m);
    }
  }
  return chosen;
}

/** ReceiveMessage. */
export function receive(model: SqsModelCore, queue: Queue, request: Request): Request {
  const max = bounded(request, 'MaxNumberOfMessages', 1, 10, 1);
  const visibility = bounded(
    request,
    'VisibilityTimeout',
    0,
    43_200,
    queue.settings.visibilityTimeoutSeconds,
  );
  bounded(request, 'WaitTimeSeconds', 0, 20, 0);
  const now = model.clock();
  queue.expire(now);
  redrive(model, queue, now);
  let chosen: StoredMessage[];
  if (queue.fifo) chosen = chooseFifo(queue, now, max);
  else {
    chosen = shuffle(queue.visible(now), model.random).slice(0, max);
    if (chosen.length > 1 && model.random() < model.shortReceiveProbability) {
      chosen = chosen.slice(0, 1 + Math.floor(model.random() * (chosen.length - 1)));
    }
    const held = queue.messages.filter((m) => m.received && m.visibleAt > now);
    if (held.length > 0 && chosen.length < max && model.random() < model.duplicateProbability) {
      chosen.push(held[Math.floor(model.random() * held.length)] as StoredMessage);
    }
  }
  if (chosen.length === 0) return {};
  const systemNames = [
    ...((request.AttributeNames as string[] | undefined) ?? []),
    ...((request.MessageSystemAttributeNames as string[] | undefined) ?? []),
  ];
  const userNames = request.MessageAttributeNames as string[] | undefined;
  return {
    Messages: chosen.map((m) => {
      m.receiveCount += 1;
      m.firstReceiveAt ??= now;
      const handle = model.nextHandle(m);
      m.handles.add(handle);
      m.latestHandle = handle;
      m.received = true;
      m.visibleAt = now + visibility * 1000;
      const system: Record<string, string | undefined> = {
        SenderId: model.accountId,
        SentTimestamp: String(m.sentAt),
        ApproximateReceiveCount: String(m.receiveCount),
        ApproximateFirstReceiveTimestamp: String(m.firstReceiveAt),
        AWSTraceHeader: m.systemAttributes.AWSTraceHeader?.StringValue,
        MessageGroupId: m.groupId,
        MessageDeduplicationId: m.deduplicationId,
        SequenceNumber: m.sequenceNumber,
        DeadLetterQueueSourceArn: m.deadLetterSourceArn,
      };
      const attributes = Object.fromEntries(
        Object.entries(system).filter(
          ([name, value]) =>
            value !== undefined && (systemNames.includes('All') || systemNames.includes(name)),
        ),
      ) as Record<string, string>;
      const user = Object.fromEntries(
        Object.entries(m.attributes).filter(([name]) => wantsAttribute(userNames, name)),
      );
      return {
        MessageId: m.messageId,
        ReceiptHandle: handle,
        MD5OfBody: m.md5OfBody,
        Body: m.body,
        ...(Object.keys(attributes).length > 0 ? { Attributes: attributes } : {}),
        ...(Object.keys(user).length > 0
          ? { MessageAttributes: structuredClone(user), MD5OfMessageAttributes: md5OfAttributes(user) }
          : {}),
      };
    }),
  };
}
