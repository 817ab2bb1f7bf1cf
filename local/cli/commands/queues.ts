import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { moveMessages } from '../../../shared/adapters/sqs-queues.ts';
import { OUTPUT_ROLES, type OutputRole } from '../../../shared/topology/topology.ts';
import { describeOutput, type OutputBody } from '../../describe.ts';
import { type Command, CommandError, intOption, numberOption, Progress, UsageError } from '../io.ts';
import { claimCheckOf, findQueue } from '../shared.ts';
import * as specs from '../specs.ts';

/** `fanin tail`: read an output queue. */
export const tail: Command = {
  ...specs.tail,
  async run(io, args) {
    const role = args.positionals[0] as OutputRole | undefined;
    if (!role || !OUTPUT_ROLES.includes(role)) {
      throw new UsageError(`tail needs an output: ${OUTPUT_ROLES.join(', ')}`);
    }
    const count = intOption(args, 'count', undefined, { min: 1 });
    const follow = args.values.follow === true;
    // Reading leaves the messages (a reader's act); deleting them is asked for by name.
    const consume = args.values.consume === true;
    if (args.values.peek === true) {
      if (consume)
        throw new UsageError('--peek and --consume contradict each other (--peek is the default now)');
      io.err(
        'warning: --peek is deprecated: tail leaves the messages by default now (--consume deletes them)',
      );
    }
    const peek = !consume;
    const timeoutMs = numberOption(args, 'timeout', 60) * 1000;
    const target = await io.target();
    const queue = target.queues[role];
    const { sqs } = target.clients;
    const claimCheck = claimCheckOf(target);
    const deadline = Date.now() + timeoutMs;
    const seen = new Set<string>();
    const peeked: Message[] = [];
    let printed = 0;
    try {
      while (!io.signal.aborted) {
        if (count !== undefined && printed >= count) break;
        if (count !== undefined && !follow && Date.now() >= deadline) break;
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queue.url,
            MaxNumberOfMessages: Math.min(10, count !== undefined ? count - printed : 10),
            WaitTimeSeconds: 1,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['SentTimestamp'],
            // A peeked message stays hidden while tail runs, so it is not printed twice.
            ...(peek ? { VisibilityTimeout: Math.ceil(timeoutMs / 1000) + 30 } : {}),
          }),
        );
        if (Messages.length === 0 && count === undefined && !follow) break;
        for (const message of Messages) {
          if (seen.has(message.MessageId ?? '')) continue;
          seen.add(message.MessageId ?? '');
          const attributes = Object.fromEntries(
            Object.entries(message.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? '']),
          );
          const text = claimCheck
            ? await claimCheck.decode(message.Body ?? '', attributes)
            : (message.Body ?? '');
          let body: OutputBody;
          try {
            body = JSON.parse(text) as OutputBody;
          } catch {
            body = { type: 'not-json', text };
          }
          if (io.wantsJson) {
            const sent = Number(message.Attributes?.SentTimestamp);
            const sentAt = Number.isFinite(sent) ? new Date(sent).toISOString() : null;
            process.stdout.write(
              `${JSON.stringify({ output: role, messageId: message.MessageId, sentAt, body })}\n`,
            );
          } else {
            io.out(`${new Date().toISOString().slice(11, 23)}  ${role}  ${describeOutput(body)}`);
          }
          printed += 1;
          if (peek) peeked.push(message);
        }
        if (!peek && Messages.length > 0) {
          await sqs.send(
            new DeleteMessageBatchCommand({
              QueueUrl: queue.url,
              Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
            }),
          );
        }
      }
    } finally {
      // Hand peeked messages back at once.
      for (let i = 0; i < peeked.length; i += 10) {
        await sqs
          .send(
            new ChangeMessageVisibilityBatchCommand({
              QueueUrl: queue.url,
              Entries: peeked
                .slice(i, i + 10)
                .map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })),
            }),
          )
          .catch(() => undefined);
      }
    }
    if (count !== undefined && printed < count) {
      throw new CommandError(
        `${printed} of ${count} message(s) arrived on ${queue.name} within ${timeoutMs / 1000} s`,
      );
    }
    if (printed === 0 && !io.wantsJson) io.err(`${queue.name} is empty`);
    return 0;
  },
};

/** `fanin redrive`: move a DLQ's messages back to their queue. */
export const redrive: Command = {
  ...specs.redrive,
  async run(io, args) {
    const name = args.positionals[0];
    if (!name) throw new UsageError('redrive needs a queue (e.g. reply-0, ingress, bank-1)');
    const max = intOption(args, 'max', Number.MAX_SAFE_INTEGER, { min: 1 }) ?? Number.MAX_SAFE_INTEGER;
    const target = await io.target();
    const queue = await findQueue(target, name);
    if (!queue.dlqUrl)
      throw new CommandError(`${queue.name} has no dead-letter queue (${queue.dlqName} not found)`);
    const { sqs } = target.clients;
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queue.dlqUrl,
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    const waiting = Number(Attributes.ApproximateNumberOfMessages ?? 0);
    const total = Math.min(max, waiting);
    const progress = new Progress(io, `redrive ${queue.dlqName} -> ${queue.name}`, total || undefined);
    progress.update(0);
    const { moved, failure } = await moveMessages(sqs, {
      from: queue.dlqUrl,
      to: queue.url,
      max,
      visibilitySeconds: 60,
      deduplicationPrefix: 'redrive-',
      defaultGroup: 'redrive',
      onBatch: (count) => progress.update(count, Math.max(total, count)),
      stop: () => io.signal.aborted,
      signal: io.signal,
    });
    if (failure) {
      progress.finish(`moved ${moved}, then stopped`);
      throw new CommandError(`sending back to ${queue.name} failed: ${failure.code} ${failure.message}`);
    }
    progress.finish(
      moved === 0
        ? `nothing to redrive: ${queue.dlqName} is empty`
        : `moved ${moved} message(s) back to ${queue.name}`,
    );
    if (io.wantsJson) io.json({ queue: queue.name, dlq: queue.dlqName, moved });
    else io.out(`moved ${moved} message(s) from ${queue.dlqName} to ${queue.name}`);
    return 0;
  },
};
