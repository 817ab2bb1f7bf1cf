import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { DynamoStateStore } from '../../shared/adapters/dynamo-state-store.ts';
import { READER_PREFIXES, S3ClaimCheck } from '../../shared/adapters/s3-claim-check.ts';
import { queueUrl, type Target } from '../../shared/client/connect.ts';
import type { QueueRef } from '../../shared/client/runtime-state.ts';
import type { AggregateHeader } from '../../shared/ports.ts';
import { formatDuration } from '../describe.ts';
import { CommandError, type CommandIO, Progress, pause } from './io.ts';

/** The state store of a target (read-only use in the CLI: headers, replies, held replies). */
export function storeOf(target: Target): DynamoStateStore {
  return new DynamoStateStore({ client: target.clients.dynamo, tableName: target.tableName });
}

/** Fails with the known names when the target knows its definitions and `name` is not one. */
export function checkDefinition(target: Target, name: string): void {
  if (target.definitions && !target.definitions.has(name)) {
    throw new CommandError(
      `unknown definition "${name}" (this runtime has ${[...target.definitions.keys()].join(', ') || 'none'})`,
    );
  }
}

/** Sends a command (or a raw event) to the control queue; returns the message id. */
export async function sendControl(target: Target, body: unknown): Promise<string> {
  const result = await target.clients.sqs.send(
    new SendMessageCommand({ QueueUrl: target.queues.control.url, MessageBody: JSON.stringify(body) }),
  );
  return result.MessageId ?? randomUUID();
}

/** The claim-check store the outputs of a target are read through (none without a bucket). */
export function claimCheckOf(target: Target): S3ClaimCheck | undefined {
  // Outputs are fanin's own objects (under outputs/), which a producer's pointer may never name.
  return target.bucketName
    ? new S3ClaimCheck({
        s3: target.clients.s3,
        bucket: target.bucketName,
        readablePrefixes: READER_PREFIXES,
      })
    : undefined;
}

/** What an error output carries of the message it refused (docs/wire-contract.md). */
export interface RefusedMessage {
  readonly messageId?: string;
  readonly attributes?: Readonly<Record<string, string>>;
}

/**
 * The reason fanin gave for refusing a message, read from the error output without taking
 * anything from it (as `fanin tail error` reads): every waiting message is looked at, hidden for a
 * few seconds so one scan sees each once, and handed back at once. `matches` picks the refused
 * message (by its SQS message id, or its attributes); undefined when none is there (yet).
 */
export async function findRefusal(
  target: Target,
  matches: (message: RefusedMessage) => boolean,
  maxMessages = 1_000,
): Promise<string | undefined> {
  const { sqs } = target.clients;
  const queueUrl = target.queues.error.url;
  if (!queueUrl) return undefined;
  const claimCheck = claimCheckOf(target);
  const peeked: Message[] = [];
  try {
    while (peeked.length < maxMessages) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 10,
        }),
      );
      if (Messages.length === 0) return undefined;
      peeked.push(...Messages);
      for (const message of Messages) {
        const attributes = Object.fromEntries(
          Object.entries(message.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? '']),
        );
        let output: { reason?: unknown; message?: RefusedMessage };
        try {
          const text = claimCheck
            ? await claimCheck.decode(message.Body ?? '', attributes)
            : (message.Body ?? '');
          output = JSON.parse(text) as typeof output;
        } catch {
          continue;
        }
        if (output?.message && typeof output.reason === 'string' && matches(output.message)) {
          return output.reason;
        }
      }
    }
    return undefined;
  } finally {
    // Hand every looked-at message back at once: the error output's readers still get them.
    for (let i = 0; i < peeked.length; i += 10) {
      await sqs
        .send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: peeked
              .slice(i, i + 10)
              .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })),
          }),
        )
        .catch(() => undefined);
    }
  }
}

/** What waiting for aggregates to close found. */
export interface WaitResult {
  readonly closed: AggregateHeader[];
  readonly open: string[];
  /** Of `open`, those whose header never appeared while waiting. */
  readonly neverOpened: string[];
  /** The reason fanin refused the request when `refused` found one (the wait then stopped). */
  readonly refusal?: string;
}

/**
 * Waits until every aggregate in `ids` has closed (or vanished after it was seen: its tombstone
 * expired), polling their headers, with a progress display. An aggregate not opened yet (a request
 * still on its way to the fan-out) is waited for, not taken as closed. Returns what closed, what
 * is still open when `timeoutMs` ran out, and which of those were never seen at all.
 */
export async function waitClosed(
  io: CommandIO,
  target: Target,
  ids: readonly string[],
  timeoutMs: number,
  label: string,
  /** Looks for the refusal of what is waited for (every second or so); a reason ends the wait. */
  refused?: () => Promise<string | undefined>,
): Promise<WaitResult> {
  const store = storeOf(target);
  const pending = new Set(ids);
  const seen = new Set<string>();
  const closed: AggregateHeader[] = [];
  const progress = new Progress(io, label, ids.length);
  const deadline = Date.now() + timeoutMs;
  progress.update(0);
  let refusal: string | undefined;
  let lookedAt = 0;
  while (pending.size > 0 && Date.now() < deadline && !io.signal.aborted) {
    // A request not opened yet may have been refused: the error output says why.
    if (
      refused &&
      pending.size > 0 &&
      [...pending].some((id) => !seen.has(id)) &&
      Date.now() - lookedAt >= 1_000
    ) {
      lookedAt = Date.now();
      refusal = await refused();
      if (refusal !== undefined) break;
    }
    for (const id of [...pending]) {
      const header = await store.getHeader(id);
      if (header) seen.add(id);
      if (header?.status === 'closed' || (!header && seen.has(id))) {
        pending.delete(id);
        if (header) closed.push(header);
      }
    }
    progress.update(ids.length - pending.size);
    if (pending.size > 0) await pause(250, io.signal);
  }
  progress.finish(
    refusal !== undefined
      ? `${label}: refused`
      : pending.size === 0
        ? `${label}: ${ids.length} closed`
        : `${label}: ${pending.size} of ${ids.length} still open after ${formatDuration(timeoutMs)}`,
  );
  const open = [...pending];
  return {
    closed,
    open,
    neverOpened: open.filter((id) => !seen.has(id)),
    ...(refusal !== undefined ? { refusal } : {}),
  };
}

/**
 * A queue of the target by what a user would type: a role (`ingress`, `completed`...), a reply
 * partition (`reply-0`), a responder (`bank-1`), a full queue name, or a queue URL.
 */
export async function findQueue(target: Target, name: string): Promise<QueueRef> {
  const all: [string, QueueRef][] = [
    ...Object.entries(target.queues),
    ...target.replyPartitions.map((ref, i) => [`reply-${i}`, ref] as [string, QueueRef]),
    ...target.responderQueues.map(
      (ref) => [ref.name.slice(target.prefix.length + 1), ref] as [string, QueueRef],
    ),
  ];
  for (const [alias, ref] of all) {
    if (ref.url && (alias === name || ref.name === name || ref.url === name || `out-${alias}` === name))
      return ref;
  }
  // Any other queue (e.g. a responder queue of a deployed stack): by name, with or without the prefix.
  const { sqs } = target.clients;
  for (const candidate of name.startsWith('http') ? [] : [name, `${target.prefix}-${name}`]) {
    const url = await queueUrl(sqs, candidate);
    if (url) {
      const fifo = candidate.endsWith('.fifo');
      const dlqName = fifo ? `${candidate.slice(0, -5)}-dlq.fifo` : `${candidate}-dlq`;
      const dlqUrl = await queueUrl(sqs, dlqName);
      return { name: candidate, url, dlqName, ...(dlqUrl ? { dlqUrl } : {}) };
    }
  }
  throw new CommandError(
    `no queue "${name}": use a role (${Object.keys(target.queues).join(', ')}), reply-<n>, a responder queue or a queue name`,
  );
}

/** Epoch ms as local ISO-like time, with how long ago or ahead. */
export function when(at: number | undefined, now = Date.now()): string {
  if (at === undefined) return '-';
  const delta = at - now;
  const relative = delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
  return `${new Date(at).toISOString()} (${relative})`;
}
