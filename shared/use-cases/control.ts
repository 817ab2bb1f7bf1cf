import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MAX_CURSOR_LENGTH } from '../adapters/state-due.ts';
import { Outcome } from '../engine/constants.ts';
import { type Definition, RuntimeParametersSchema, runtimeParameterIssues } from '../engine/definition.ts';
import { matchesPattern } from '../engine/event-pattern.ts';
import { parseJsonBody } from '../engine/json-body.ts';
import { completionStageOf } from '../engine/lifecycle.ts';
import { MAX_AGGREGATE_ID_BYTES } from '../engine/limits.ts';
import { BadMessageError } from '../errors.ts';
import type { ActivePage, AggregateHeader, RawMessage } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { completeAggregate } from './complete.ts';
import type { FaninContext } from './context.ts';
import { routeIfUnfixable } from './error-output.ts';
import { resolvePayload } from './stored-payloads.ts';

/** What a continuation's `run` may be: an SQS message id (or any short id of the same characters). */
const RUN_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** At most this many entries a `list` command reads (its result is one status message). */
export const MAX_LIST_LIMIT = 100;

const Target = {
  aggregateId: z
    .string()
    .min(1)
    .refine((id) => Buffer.byteLength(id) <= MAX_AGGREGATE_ID_BYTES, {
      message: `must be at most ${MAX_AGGREGATE_ID_BYTES} bytes`,
    })
    .optional(),
  definition: z.string().min(1).optional(),
  all: z.literal(true).optional(),
  /** Where a command over a whole definition (or all) goes on: set by fanin on its continuations. */
  cursor: z.string().min(1).max(MAX_CURSOR_LENGTH).optional(),
  /** Only aggregates opened up to this time (epoch ms); by default the time the command is first handled. */
  openedUpTo: z.int().min(0).optional(),
  /** The message id of the command a continuation goes on from (it labels every part's result). */
  run: z.string().regex(RUN_ID).optional(),
};

/** The control bus's commands. See docs/wire-contract.md. */
export const ControlCommandSchema = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('purge'), ...Target }),
  z.strictObject({ command: z.literal('complete'), ...Target }),
  z.strictObject({
    command: z.literal('list'),
    definition: z.string().min(1).optional(),
    limit: z.int().min(1).max(MAX_LIST_LIMIT).optional(),
    cursor: z.string().min(1).max(MAX_CURSOR_LENGTH).optional(),
  }),
  z.strictObject({
    command: z.literal('set-parameters'),
    definition: z.string().min(1),
    parameters: RuntimeParametersSchema,
  }),
]);
export type ControlCommand = z.infer<typeof ControlCommandSchema>;

/** An active aggregate as `fanin.status.active` lists it (and the CLI and the dashboard show it). */
export function activeSummary(header: AggregateHeader) {
  return {
    aggregateId: header.aggregateId,
    definition: header.definition,
    status: header.status,
    received: header.received,
    expected: header.expected ?? null,
    openedAt: header.openedAt,
    deadline: header.deadline ?? null,
  };
}

/**
 * Handles one control message: a fanin command, or a raw EventBridge event delivered by a
 * definition's external-event rule (it completes the aggregate named in `detail.aggregateId`,
 * or, for a definition that opts in, every open aggregate of the definition whose pattern matches).
 *
 * Results go to the status output with a deterministic id per control message.
 */
export async function handleControl(
  ctx: FaninContext,
  raw: RawMessage,
  options: ControlOptions = {},
): Promise<void> {
  let command: ControlCommand;
  try {
    command = await toCommand(ctx, parseJsonBody(await resolvePayload(ctx, raw)));
  } catch (error) {
    await routeIfUnfixable(ctx, 'control', raw, error);
    return;
  }
  const id = `control/${raw.messageId}`;
  if (command.command === 'list') {
    // One page (the status message carries it whole); `next` asks for the following one.
    let page: ActivePage;
    try {
      page = await ctx.store.listActivePage({
        ...(command.definition !== undefined ? { definition: command.definition } : {}),
        limit: command.limit ?? MAX_LIST_LIMIT,
        replies: true,
        ...(command.cursor !== undefined ? { cursor: command.cursor } : {}),
      });
    } catch (error) {
      await routeIfUnfixable(ctx, 'control', raw, error);
      return;
    }
    const aggregates = page.aggregates
      .map((a) => a.header)
      .filter((header) => completionStageOf(header) === 'open')
      .sort((x, y) => x.openedAt - y.openedAt)
      .map(activeSummary);
    await ctx.outputs.publish(QueueRole.STATUS, {
      id,
      type: 'fanin.status.active',
      at: ctx.clock(),
      aggregates,
      ...(page.next !== undefined ? { next: page.next } : {}),
    });
    return;
  }
  if (command.command === 'set-parameters') {
    await ctx.store.setParameters(command.definition, command.parameters);
    await ctx.outputs.publish(QueueRole.STATUS, {
      id,
      type: 'fanin.control.result',
      command: 'set-parameters',
      definition: command.definition,
      parameters: command.parameters,
    });
    return;
  }
  const outcome = command.command === 'purge' ? Outcome.PURGED : Outcome.COMPLETED;
  if (command.aggregateId !== undefined) {
    // Completing ones too: a command redelivered after its invocation crashed mid-completion is
    // what finishes that completion (completeAggregate resumes it once its lease has run out).
    const header = await ctx.store.getHeader(command.aggregateId);
    const affected =
      header &&
      completionStageOf(header) !== 'closed' &&
      (await completeAggregate(ctx, command.aggregateId, outcome))
        ? [command.aggregateId]
        : [];
    await ctx.outputs.publish(QueueRole.STATUS, {
      id,
      type: 'fanin.control.result',
      command: command.command,
      affected,
    });
    return;
  }
  await completeEvery(ctx, raw, { ...command, outcome }, options);
}

/** What the invocation running a control command tells it. */
export interface ControlOptions {
  /** Milliseconds the invocation has left (Lambda's `getRemainingTimeInMillis`). @default unbounded */
  readonly remainingTimeMs?: () => number;
}

/** Time an invocation keeps in hand to finish the completion under way and send the rest on. */
export const CONTROL_MARGIN_MS = 10_000;
/** Aggregates completed at once within a page. */
const COMPLETERS = 8;
/**
 * Clocks differ by seconds: an aggregate opened just before the command, stamped by a clock ahead
 * of the control function's, is still one the command means.
 */
export const CONTROL_CLOCK_SKEW_MS = 10_000;
/**
 * The latest an open aggregate opened at `t` can be due: its allowed life or deadline (a year at
 * most, whatever parameters it was given) with a day to spare. A run reads the index no further
 * than this past `openedUpTo`, so it ends even while new aggregates keep opening ahead of it.
 */
export const LONGEST_DUE_MS = 366 * 24 * 3600 * 1000;

/**
 * `purge` or `complete` of every aggregate of a definition (or of all): page by page through the
 * `due` index, as many pages as the invocation's time and {@link FaninContext.controlPagesPerInvocation}
 * allow, then the rest sent on to the control queue as a continuation (the same command with the
 * cursor where this invocation stopped, `openedUpTo` and `run`), so no invocation's work grows with
 * the number of open aggregates. Each invocation publishes its own `fanin.control.result` (the
 * aggregates it closed, `more: true` while a continuation goes on, the `run` they share).
 *
 * At-least-once, without a record of the run: every aggregate the command means (of the
 * definition, opened up to `openedUpTo`, open) whose index entry is at or before a cursor has been
 * sealed before any continuation carrying that cursor is sent. An open aggregate's entry only moves
 * later (an inactivity deadline, a deferred due item), never back behind a cursor; a sealed one is
 * completed by its own lease if not by this command. So a redelivered part (a crash before its
 * continuation was sent, or after) redoes its page from the same cursor, finding the aggregates it
 * completed already closed and out of the index; a duplicated part walks the same positions, and
 * completing is idempotent per aggregate (one seal wins, the rest publish nothing new). Every
 * part moves its cursor on by at least one entry, and no run reads past `openedUpTo` + a year
 * ({@link LONGEST_DUE_MS}), so every chain of parts ends.
 */
async function completeEvery(
  ctx: FaninContext,
  raw: RawMessage,
  command: {
    command: 'purge' | 'complete';
    outcome: Outcome;
    definition?: string;
    cursor?: string;
    openedUpTo?: number;
    run?: string;
  },
  options: ControlOptions,
): Promise<void> {
  const openedUpTo = command.openedUpTo ?? ctx.clock() + CONTROL_CLOCK_SKEW_MS;
  const run =
    command.run ??
    (RUN_ID.test(raw.messageId) ? raw.messageId : createHash('sha256').update(raw.messageId).digest('hex'));
  const remaining = options.remainingTimeMs ?? (() => Number.POSITIVE_INFINITY);
  const affected: string[] = [];
  let cursor = command.cursor;
  let started = false;
  for (let pages = 0; pages < ctx.controlPagesPerInvocation; pages += 1) {
    let page: ActivePage;
    try {
      page = await ctx.store.listActivePage({
        ...(command.definition !== undefined ? { definition: command.definition } : {}),
        limit: ctx.controlPageSize,
        ...(cursor !== undefined ? { cursor } : {}),
        dueBy: openedUpTo + LONGEST_DUE_MS,
      });
    } catch (error) {
      await routeIfUnfixable(ctx, 'control', raw, error);
      return;
    }
    const targets = page.aggregates.filter(
      ({ header }) => header.openedAt <= openedUpTo && completionStageOf(header) !== 'closed',
    );
    // In index order, never starting one once time runs short (after the first: every part moves
    // on); those started all finish, so the ones done are a prefix of the page.
    let next = 0;
    let stopped: number | undefined;
    const closed: (string | undefined)[] = [];
    const completer = async () => {
      for (let i = next++; i < targets.length && stopped === undefined; i = next++) {
        if (started && remaining() < CONTROL_MARGIN_MS) {
          stopped = i;
          return;
        }
        started = true;
        const { header } = targets[i] as (typeof targets)[number];
        if (await completeAggregate(ctx, header.aggregateId, command.outcome)) closed[i] = header.aggregateId;
      }
    };
    const settled = await Promise.allSettled(
      Array.from({ length: Math.min(COMPLETERS, targets.length) }, completer),
    );
    const failure = settled.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    affected.push(...closed.filter((a) => a !== undefined));
    if (stopped !== undefined) {
      // The first one not started: the rest goes on from the last one before it.
      cursor = stopped === 0 ? cursor : (targets[stopped - 1] as (typeof targets)[number]).after;
      break;
    }
    cursor = page.next;
    started = true;
    if (cursor === undefined || remaining() < CONTROL_MARGIN_MS) break;
  }
  const more = cursor !== undefined;
  if (more) {
    await ctx.continueControl(
      JSON.stringify({
        command: command.command,
        ...(command.definition !== undefined ? { definition: command.definition } : { all: true }),
        cursor,
        openedUpTo,
        run,
      }),
    );
  }
  await ctx.outputs.publish(QueueRole.STATUS, {
    id: `control/${raw.messageId}`,
    type: 'fanin.control.result',
    command: command.command,
    affected,
    run,
    ...(more ? { more: true } : {}),
  });
}

async function toCommand(ctx: FaninContext, body: unknown): Promise<ControlCommand> {
  if (body !== null && typeof body === 'object' && 'detail-type' in body && 'source' in body) {
    return await fromEvent(ctx, body as Record<string, unknown>);
  }
  const parsed = ControlCommandSchema.safeParse(body, { reportInput: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new BadMessageError(
      `invalid control command: ${issue?.path.join('.') || '(command)'}: ${issue?.message}`,
    );
  }
  const command = parsed.data;
  if (command.command === 'purge' || command.command === 'complete') {
    const given = [command.aggregateId, command.definition, command.all].filter(
      (v) => v !== undefined,
    ).length;
    if (given !== 1)
      throw new BadMessageError(
        `${command.command} needs exactly one of aggregateId, definition or all: true`,
      );
    if (
      command.aggregateId !== undefined &&
      (command.cursor !== undefined || command.openedUpTo !== undefined || command.run !== undefined)
    )
      throw new BadMessageError(`${command.command} of one aggregate takes no cursor, openedUpTo or run`);
    // A continuation comes as a message: it may reach no further ahead than a new command does.
    if (command.openedUpTo !== undefined && command.openedUpTo > ctx.clock() + CONTROL_CLOCK_SKEW_MS)
      throw new BadMessageError(`openedUpTo ${command.openedUpTo} is in the future`);
  }
  if (
    'definition' in command &&
    command.definition !== undefined &&
    !ctx.definitions.has(command.definition)
  ) {
    throw new BadMessageError(`unknown definition "${command.definition}"`);
  }
  if (command.command === 'set-parameters') {
    const definition = ctx.definitions.get(command.definition);
    const [issue] = definition ? runtimeParameterIssues(definition, command.parameters) : [];
    if (issue !== undefined) throw new BadMessageError(`invalid set-parameters: ${issue}`);
  }
  return command;
}

/**
 * True when a definition lets one external event without `detail.aggregateId` complete every open
 * aggregate of it (`externalEventCompletesAll: true`, a market close): an explicit opt-in, since
 * any principal that may put a matching event could otherwise end every aggregate at once.
 */
export function completesAllOnEvent(definition: Pick<Definition, 'externalEventCompletesAll'>): boolean {
  return definition.externalEventCompletesAll;
}

/**
 * The command an external event stands for. An event naming `detail.aggregateId` completes that
 * aggregate only when the aggregate's own definition has an `externalEventPattern` and the event
 * matches it: the event is untrusted input and must not close aggregates of other definitions.
 * An event without one is refused (it names nothing to complete), unless the one definition whose
 * pattern matches opts in to being completed whole by an event ({@link completesAllOnEvent}).
 */
async function fromEvent(ctx: FaninContext, event: Record<string, unknown>): Promise<ControlCommand> {
  const detail = event.detail as Record<string, unknown> | undefined;
  if (detail !== null && typeof detail === 'object' && 'aggregateId' in detail) {
    const aggregateId = detail.aggregateId;
    if (typeof aggregateId !== 'string' || aggregateId === '') {
      throw new BadMessageError('event detail.aggregateId must be a non-empty string');
    }
    // Beyond it the key of the header read would pass DynamoDB's limit: refused, not retried.
    if (Buffer.byteLength(aggregateId) > MAX_AGGREGATE_ID_BYTES) {
      throw new BadMessageError(`event detail.aggregateId is over ${MAX_AGGREGATE_ID_BYTES} bytes`);
    }
    const header = await ctx.store.getHeader(aggregateId);
    // Nothing to complete (never opened, or closed and gone): the result says so, affecting nothing.
    if (!header) return { command: 'complete', aggregateId };
    const definition = ctx.definitions.get(header.definition);
    if (!definition?.externalEventPattern) {
      throw new BadMessageError(
        `${eventName(event)} names aggregate "${aggregateId}" of definition "${header.definition}", which is not completed by external events (no externalEventPattern)`,
      );
    }
    if (!matchesPattern(definition.externalEventPattern, event)) {
      throw new BadMessageError(
        `${eventName(event)} names aggregate "${aggregateId}" but does not match the externalEventPattern of its definition "${header.definition}"`,
      );
    }
    return { command: 'complete', aggregateId };
  }
  const matching = [...ctx.definitions.values()].filter(
    (d) => d.externalEventPattern && matchesPattern(d.externalEventPattern, event),
  );
  const [first, ...rest] = matching;
  if (!first) throw new BadMessageError(`no definition's external event pattern matches ${eventName(event)}`);
  if (rest.length > 0)
    throw new BadMessageError(`event matches several definitions: ${matching.map((d) => d.name).join(', ')}`);
  if (!completesAllOnEvent(first)) {
    throw new BadMessageError(
      `${eventName(event)} names no aggregate (detail.aggregateId), and definition "${first.name}" is not completed whole by an event (externalEventCompletesAll)`,
    );
  }
  return { command: 'complete', definition: first.name };
}

/** How a reason names an event: by its id when it has one. */
function eventName(event: Record<string, unknown>): string {
  return typeof event.id === 'string' && event.id !== '' ? `event ${event.id}` : 'the event';
}
