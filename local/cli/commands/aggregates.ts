import { randomUUID } from 'node:crypto';
import { type MessageAttributeValue, SendMessageCommand } from '@aws-sdk/client-sqs';
import { destinationOf, faninClientOf } from '../../../shared/client/connect.ts';
import { WireAttribute } from '../../../shared/engine/correlation.ts';
import type { Definition } from '../../../shared/engine/definition.ts';
import { BadMessageError } from '../../../shared/errors.ts';
import type { AggregateHeader } from '../../../shared/ports.ts';
import { activeSummary } from '../../../shared/use-cases/control.ts';
import { openingRequestId } from '../../../shared/use-cases/fan-out.ts';
import { compact, formatDuration } from '../../describe.ts';
import { type RecipientsView, recipientsFields, recipientsView } from '../../fates.ts';
import { DEFAULT_LIST_LIMIT, listActivePage } from '../../views.ts';
import {
  type Command,
  CommandError,
  intOption,
  jsonOption,
  numberOption,
  stringOption,
  table,
  UsageError,
} from '../io.ts';
import {
  checkDefinition,
  findQueue,
  findRefusal,
  sendControl,
  storeOf,
  waitClosed,
  when,
} from '../shared.ts';
import * as specs from '../specs.ts';

/**
 * The commands on aggregates: `send` a request, `reply`, `show` one, `list` the active ones. The
 * commands that go through the control bus are in `control.ts`.
 */

/** The status output's summary of an aggregate, plus what `show` adds for a closed one. */
function headerSummary(header: AggregateHeader): Record<string, unknown> {
  return {
    ...activeSummary(header),
    outcome: header.outcome ?? null,
    lateCount: header.lateCount,
    requestId: openingRequestId(header) ?? null,
  };
}

/** `fanin send`: a request to the ingress queue. */
export const send: Command = {
  ...specs.send,
  async run(io, args) {
    const definition = args.positionals[0];
    if (!definition) throw new UsageError('send needs a definition name');
    const body = (jsonOption(args, 'body') ?? {}) as Record<string, unknown>;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new UsageError('--body must be a JSON object');
    }
    const payload = jsonOption(args, 'payload');
    if (payload !== undefined) body.payload = payload;
    const recipients = stringOption(args, 'recipients');
    if (recipients !== undefined) body.recipients = recipients.split(',').filter(Boolean);
    const expected = intOption(args, 'expected', undefined, { min: 0 });
    if (expected !== undefined) body.expected = expected;
    const timeoutMs = numberOption(args, 'timeout', 60) * 1000;
    const target = await io.target();
    checkDefinition(target, definition);
    if (target.definitions?.get(definition)?.mode === 'self-starting') {
      throw new CommandError(
        `definition "${definition}" is self-starting: its first message opens the aggregate. Publish one with: fanin reply --definition ${definition} --body <json>`,
      );
    }
    const aggregateId = stringOption(args, 'aggregate-id') ?? `${definition}-${randomUUID().slice(0, 8)}`;
    const requestId = stringOption(args, 'request-id') ?? randomUUID();
    // An aggregate id is taken for good (its tombstone recognises late replies): fanin refuses a
    // new request under it to the error output. Say so here rather than report the send.
    const taken = await storeOf(target).getHeader(aggregateId);
    if (taken && openingRequestId(taken) !== requestId) {
      throw new CommandError(
        `aggregate id "${aggregateId}" is taken (${taken.status}${taken.outcome ? `, ${taken.outcome}` : ''}, opened ${when(taken.openedAt)}): fanin would refuse this request to ${target.queues.error.name}. Leave out --aggregate-id for a new one, or pick another`,
      );
    }
    await faninClientOf(target).sendRequest(definition, body, { aggregateId, requestId });
    const sent = { definition, aggregateId, requestId, queueUrl: target.queues.ingress.url };
    if (!args.values.wait) {
      if (io.wantsJson) io.json(sent);
      else io.out(`sent request ${requestId} to ${target.queues.ingress.name}: aggregate ${aggregateId}`);
      return 0;
    }
    if (!io.wantsJson) io.out(`sent request ${requestId}: aggregate ${aggregateId}`);
    // A request fanin refuses opens nothing: its reason is on the error output, under its ids.
    const { closed, refusal } = await waitClosed(
      io,
      target,
      [aggregateId],
      timeoutMs,
      `waiting for ${aggregateId}`,
      () =>
        findRefusal(
          target,
          (m) =>
            m.attributes?.[WireAttribute.REQUEST_ID] === requestId &&
            m.attributes?.[WireAttribute.AGGREGATE_ID] === aggregateId,
        ),
    );
    if (refusal !== undefined) {
      if (io.wantsJson) io.json({ ...sent, refused: refusal });
      throw new CommandError(
        `request ${requestId} (aggregate ${aggregateId}) was refused to ${target.queues.error.name}: ${refusal}`,
      );
    }
    const header = closed[0] ?? (await storeOf(target).getHeader(aggregateId));
    if (header && openingRequestId(header) !== requestId) {
      throw new CommandError(
        `aggregate ${aggregateId} was opened by another request (${openingRequestId(header) ?? 'a self-starting message'}): this one was refused to ${target.queues.error.name} (fanin tail error)`,
      );
    }
    if (io.wantsJson) io.json({ ...sent, aggregate: header ? headerSummary(header) : null });
    if (header?.status !== 'closed') {
      throw new CommandError(
        `aggregate ${aggregateId} is not closed after ${formatDuration(timeoutMs)}${
          header
            ? ` (${header.status}, ${header.received}/${header.expected ?? '?'} replies)`
            : ' (not opened yet: is the runtime running?)'
        }`,
      );
    }
    if (!io.wantsJson) {
      io.out(
        `${aggregateId} ${header.outcome ?? 'closed'}: ${header.received}/${header.expected ?? '?'} replies (the result is on ${target.queues.completed.name} or ${target.queues['timed-out'].name}: fanin tail completed)`,
      );
    }
    return 0;
  },
};

/** `fanin reply`: answer a sub-request, or publish a reply / a self-starting message. */
export const reply: Command = {
  ...specs.reply,
  async run(io, args) {
    const body = jsonOption(args, 'body');
    if (body === undefined) throw new UsageError('reply needs --body <json>');
    const from = stringOption(args, 'from');
    const aggregateId = stringOption(args, 'aggregate-id');
    const definition = stringOption(args, 'definition');
    if (!from && !aggregateId && !definition) {
      throw new UsageError('reply needs --from <queue>, --aggregate-id <id> or --definition <name>');
    }
    const target = await io.target();
    const client = faninClientOf(target);
    if (from) {
      const queue = await findQueue(target, from);
      const waitMs = numberOption(args, 'wait-for', 10) * 1000;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const left = Math.max(0, Math.min(20, Math.ceil((deadline - Date.now()) / 1000)));
        const [sub] = await client.receive(queue.url, { max: 1, waitSeconds: left });
        if (sub) {
          const sent = await client.reply(sub, body);
          await client.ack(sub);
          const result = {
            aggregateId: sub.aggregateId ?? null,
            replyId: sub.replyId ?? null,
            partition: sent.partition ?? null,
            queueUrl: sent.queueUrl,
            subRequest: sub.body,
          };
          if (io.wantsJson) io.json(result);
          else
            io.out(
              `replied to ${sub.aggregateId} (reply ${sub.replyId}) on partition ${sent.partition ?? sent.queueUrl}; the sub-request was ${compact(sub.body, 60)}`,
            );
          return 0;
        }
        if (Date.now() >= deadline || io.signal.aborted) break;
      }
      throw new CommandError(`no sub-request waiting on ${queue.name} (waited ${formatDuration(waitMs)})`);
    }
    if (definition) checkDefinition(target, definition);
    const attributes: Record<string, string> = {
      ...(aggregateId ? { [WireAttribute.AGGREGATE_ID]: aggregateId } : {}),
      ...(stringOption(args, 'reply-id')
        ? { [WireAttribute.REPLY_ID]: stringOption(args, 'reply-id') as string }
        : {}),
      ...(definition ? { [WireAttribute.DEFINITION]: definition } : {}),
    };
    const partitionIndex = intOption(args, 'partition', undefined, { min: 0 });
    let partition: number;
    if (partitionIndex !== undefined) {
      const ref = target.replyPartitions[partitionIndex];
      if (!ref) {
        throw new CommandError(
          `no reply partition ${partitionIndex} (there are ${target.replyPartitions.length}: 0-${target.replyPartitions.length - 1})`,
        );
      }
      await target.clients.sqs.send(
        new SendMessageCommand({
          QueueUrl: ref.url,
          MessageBody: JSON.stringify(body),
          MessageAttributes: Object.fromEntries(
            Object.entries(attributes).map(([k, v]): [string, MessageAttributeValue] => [
              k,
              { DataType: 'String', StringValue: v },
            ]),
          ),
          ...(ref.url.endsWith('.fifo')
            ? { MessageGroupId: aggregateId ?? 'cli', MessageDeduplicationId: randomUUID() }
            : {}),
        }),
      );
      partition = partitionIndex;
    } else if (definition) {
      partition = await client.publish(
        definition,
        body,
        aggregateId ? { kind: 'affinity', key: aggregateId } : { kind: 'balanced' },
        attributes,
      );
    } else {
      partition = (
        await destinationOf(target).send(
          {
            body: JSON.stringify(body),
            attributes: Object.fromEntries(
              Object.entries(attributes).map(([k, v]) => [k, { DataType: 'String', StringValue: v }]),
            ),
            groupId: aggregateId ?? 'cli',
            deduplicationId: randomUUID(),
          },
          { kind: 'affinity', key: aggregateId ?? '' },
        )
      ).partition;
    }
    if (io.wantsJson) io.json({ aggregateId: aggregateId ?? null, partition, attributes });
    else io.out(`sent reply to ${target.replyPartitions[partition]?.name ?? `partition ${partition}`}`);
    return 0;
  },
};

/** `fanin show`: one aggregate from the state table. */
export const show: Command = {
  ...specs.show,
  async run(io, args) {
    const aggregateId = args.positionals[0];
    if (!aggregateId) throw new UsageError('show needs an aggregate id');
    const target = await io.target();
    const store = storeOf(target);
    const [snapshot, held] = await Promise.all([
      store.readAggregate(aggregateId),
      store.listHeld(aggregateId),
    ]);
    const found = snapshot.header;
    const fates = found ? await fatesOf(store, target, found) : undefined;
    if (!found && held.length > 0) {
      // Replies came before their request: no aggregate yet, but what it will find is held.
      if (io.wantsJson) io.json({ aggregateId, status: 'not opened', held: held.map(heldSummary) });
      else {
        io.out(`aggregate ${aggregateId}: not opened yet; ${held.length} unknown replies held for it`);
        showHeld(io, held);
      }
      return 0;
    }
    if (!found) throw new CommandError(`no aggregate "${aggregateId}" in table ${target.tableName}`);
    const replies = snapshot.replies.filter((r) => !r.late);
    // An open aggregate's header counts nothing (replies are never written to it): count here.
    const header = found.status === 'open' ? { ...found, received: replies.length } : found;
    if (io.wantsJson) {
      io.json({
        ...headerSummary(header),
        completingAt: header.completingAt ?? null,
        expiresAt: header.expiresAt ?? null,
        params: header.params,
        replies: replies.map((r) => ({
          replyId: r.replyId,
          receivedAt: r.receivedAt,
          body: r.payloadRef ? { payloadRef: r.payloadRef } : parseBody(r.payload),
        })),
        held: held.map(heldSummary),
        ...recipientsFields(fates),
      });
      return 0;
    }
    const rows: string[][] = [
      ['aggregate', header.aggregateId],
      ['definition', header.definition],
      ['status', `${header.status}${header.outcome ? ` (${header.outcome})` : ''}`],
      ['replies', `${header.received} of ${header.expected ?? '?'} received, ${header.lateCount} late`],
      ['opened', when(header.openedAt)],
      ['deadline', deadlineText(header.status, header.deadline)],
    ];
    if (Object.keys(header.params).length > 0) rows.push(['parameters', JSON.stringify(header.params)]);
    if (header.requestId) rows.push(['request id', openingRequestId(header) ?? '']);
    if (header.expiresAt) rows.push(['tombstone until', when(header.expiresAt * 1000)]);
    for (const line of table(rows)) io.out(line);
    if (replies.length > 0) {
      io.out('recorded replies:');
      for (const line of table(
        replies.map((r) => [
          `  ${r.replyId}`,
          new Date(r.receivedAt).toISOString(),
          compact(parseBody(r.payload), 80),
        ]),
      )) {
        io.out(line);
      }
    } else if (header.status === 'closed') {
      io.out('(no replies recorded; its result went to an output queue)');
    }
    if (fates) for (const line of fatesTable(fates)) io.out(line);
    showHeld(io, held);
    return 0;
  },
};

/**
 * Each recipient's fate, for a definition with `responders` (local/fates.ts): the items read whole
 * once more, since the close removes the parameters the deadlines come from (the seal kept a copy).
 * Nothing is read for a definition the target knows has none.
 */
async function fatesOf(
  store: ReturnType<typeof storeOf>,
  target: { readonly definitions?: ReadonlyMap<string, Definition> | undefined },
  header: AggregateHeader,
): Promise<RecipientsView | undefined> {
  const definition = target.definitions?.get(header.definition);
  if (target.definitions && !definition?.responders) return undefined;
  return recipientsView(await store.readHistory(header.aggregateId), definition, Date.now());
}

/**
 * The recipients' fates as `show` prints them: a heading that says whether they are the result's
 * or the fates so far, then one row each (the label column only when one has a label, the retries
 * column only when one says how often its sub-request was sent again, the failed attempt column
 * only when one failed an attempt that was asked again: `responders.retry.failedReplies`).
 */
export function fatesTable(view: RecipientsView): string[] {
  const iso = (at: number | undefined) => (at === undefined ? '-' : new Date(at).toISOString());
  const labelled = view.recipients.some((r) => r.label !== undefined);
  const retried = view.recipients.some((r) => r.retries !== undefined);
  const failedBefore = view.recipients.some((r) => r.failedAttempt !== undefined);
  const heading = view.soFar
    ? `recipients so far (open: their fates at ${iso(view.at)}, not a result's):`
    : `recipients (as the result gives them, at its seal ${iso(view.at)}):`;
  const rows = [
    [
      'REPLY',
      ...(labelled ? ['LABEL'] : []),
      'FATE',
      'DEADLINE',
      'HEARTBEAT',
      ...(retried ? ['RETRIES'] : []),
      ...(failedBefore ? ['FAILED ATTEMPT'] : []),
    ],
    ...view.recipients.map((r) => [
      r.replyId,
      ...(labelled ? [r.label ?? '-'] : []),
      r.fate,
      iso(r.deadline),
      iso(r.heartbeatAt),
      ...(retried ? [r.retries === undefined ? '-' : String(r.retries)] : []),
      ...(failedBefore ? [r.failedAttempt === undefined ? '-' : String(r.failedAttempt)] : []),
    ]),
  ];
  return [heading, ...table(rows).map((line) => `  ${line}`)];
}

type HeldReply = Awaited<ReturnType<ReturnType<typeof storeOf>['listHeld']>>[number];

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function heldSummary(h: HeldReply) {
  return { replyId: h.replyId, receivedAt: h.receivedAt, dueAt: h.dueAt, body: parseBody(h.body) };
}

function showHeld(io: { out(line: string): void }, held: readonly HeldReply[]): void {
  if (held.length === 0) return;
  io.out('held (unknown) replies:');
  for (const h of held) io.out(`  ${h.replyId}  due ${when(h.dueAt)}  ${compact(parseBody(h.body), 60)}`);
}

/** `fanin list`: active aggregates. */
export const list: Command = {
  ...specs.list,
  async run(io, args) {
    const target = await io.target();
    const definition = stringOption(args, 'definition');
    if (definition) checkDefinition(target, definition);
    const limit = intOption(args, 'limit', DEFAULT_LIST_LIMIT, { min: 1, max: 1000 }) ?? DEFAULT_LIST_LIMIT;
    const cursor = stringOption(args, 'cursor');
    let page: Awaited<ReturnType<typeof listActivePage>>;
    try {
      page = await listActivePage(target.clients.dynamo, target.tableName, {
        ...(definition ? { definition } : {}),
        limit,
        ...(cursor !== undefined ? { cursor } : {}),
      });
    } catch (error) {
      if (error instanceof BadMessageError) throw new UsageError(`--cursor: ${error.message}`);
      throw error;
    }
    const active = page.aggregates;
    // The command that shows the next page: the same one, from where this one ended.
    const more =
      page.next === undefined
        ? undefined
        : `fanin list${definition ? ` --definition ${definition}` : ''}${args.values.limit !== undefined ? ` --limit ${limit}` : ''} --cursor ${page.next}`;
    if (args.values.publish) {
      const id = await sendControl(target, { command: 'list', ...(definition ? { definition } : {}) });
      io.err(`sent control command list (${id}); the snapshot arrives on ${target.queues.status.name}`);
    }
    if (io.wantsJson) {
      io.json(active);
      if (more) io.err(`more aggregates: ${more}`);
      return 0;
    }
    if (active.length === 0) {
      io.out(
        `no active aggregates${definition ? ` of ${definition}` : ''}${more ? ` in this page; more: ${more}` : ''}`,
      );
      return 0;
    }
    const now = Date.now();
    for (const line of table([
      ['AGGREGATE', 'DEFINITION', 'STATUS', 'REPLIES', 'AGE', 'DEADLINE'],
      ...active.map((a) => [
        a.aggregateId,
        a.definition,
        a.status,
        `${a.received}/${a.expected ?? '?'}`,
        formatDuration(now - a.openedAt),
        a.deadline === null ? '-' : a.deadline > now ? `in ${formatDuration(a.deadline - now)}` : 'due',
      ]),
    ])) {
      io.out(line);
    }
    if (more) io.out(`more aggregates: ${more}`);
    return 0;
  },
};

/**
 * An aggregate's deadline as `show` prints it: when it is (relative to now) while the aggregate is
 * open; for one that ended before it, that it was not reached, never a countdown to a deadline
 * that no longer applies.
 */
export function deadlineText(status: string, deadline: number | undefined, now = Date.now()): string {
  if (status === 'open' || deadline === undefined || deadline <= now) return when(deadline, now);
  return `${new Date(deadline).toISOString()} (not reached: ${status} before it)`;
}
