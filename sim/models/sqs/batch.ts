/**
 * The batch commands of the SQS model: SendMessageBatch, DeleteMessageBatch and
 * ChangeMessageVisibilityBatch. The batch as a whole is refused as SQS refuses it (no entries,
 * more than 10, repeated or malformed ids, more than SQS's largest message in all); each entry then
 * succeeds or fails on its own, reported in `Failed` with SQS's code and message.
 */
import {
  BatchEntryIdsNotDistinct,
  BatchRequestTooLong,
  EmptyBatchRequest,
  InvalidBatchEntryId,
  TooManyEntriesInBatchRequest,
} from '@aws-sdk/client-sqs';
import { sdkError } from '../errors.ts';
import { type AttributeValue, messageSize } from './messages.ts';
import type { SqsModelCore } from './model.ts';

/** The batch commands, by operation name. */
export const BATCH_COMMANDS = new Set([
  'SendMessageBatch',
  'DeleteMessageBatch',
  'ChangeMessageVisibilityBatch',
]);

type Request = Record<string, unknown>;

const ENTRY_NAMES: Record<string, string> = {
  SendMessageBatch: 'SendMessageBatchRequestEntry',
  DeleteMessageBatch: 'DeleteMessageBatchRequestEntry',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibilityBatchRequestEntry',
};

/** Runs one batch command. */
export function batch(model: SqsModelCore, operation: string, request: Request): Request {
  const queue = model.queue(request.QueueUrl);
  const entries = (request.Entries ?? []) as Request[];
  if (entries.length === 0) {
    throw sdkError(
      EmptyBatchRequest,
      `There should be at least one ${ENTRY_NAMES[operation]} in the request.`,
    );
  }
  if (entries.length > 10) {
    throw sdkError(
      TooManyEntriesInBatchRequest,
      `Maximum number of entries per request are 10. You have sent ${entries.length}.`,
    );
  }
  const ids = new Set<string>();
  for (const entry of entries) {
    const id = String(entry.Id ?? '');
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(id)) {
      throw sdkError(
        InvalidBatchEntryId,
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    }
    if (ids.has(id)) throw sdkError(BatchEntryIdsNotDistinct, `Id ${id} repeated.`);
    ids.add(id);
  }
  if (operation === 'SendMessageBatch') {
    const total = entries.reduce(
      (n, e) =>
        n +
        messageSize(
          String(e.MessageBody ?? ''),
          (e.MessageAttributes ?? {}) as Record<string, AttributeValue>,
        ),
      0,
    );
    // The batch in all against SQS's limit; each entry against its queue's (a Failed entry).
    if (total > model.maxMessageBytes) {
      throw sdkError(
        BatchRequestTooLong,
        `Batch requests cannot be longer than ${model.maxMessageBytes} bytes.`,
      );
    }
  }
  const Successful: Request[] = [];
  const Failed: Request[] = [];
  for (const entry of entries) {
    const Id = String(entry.Id);
    try {
      if (operation === 'SendMessageBatch') Successful.push({ Id, ...model.send(queue, entry) });
      else if (operation === 'DeleteMessageBatch') {
        model.deleteMessage(queue, String(entry.ReceiptHandle ?? ''));
        Successful.push({ Id });
      } else {
        model.changeVisibility(queue, String(entry.ReceiptHandle ?? ''), entry.VisibilityTimeout);
        Successful.push({ Id });
      }
    } catch (error) {
      const e = error as Error & { Code?: string };
      Failed.push({ Id, SenderFault: true, Code: e.Code ?? e.name, Message: e.message });
    }
  }
  return { Successful, Failed };
}
