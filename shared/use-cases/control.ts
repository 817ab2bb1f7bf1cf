import { z } from 'zod';
import { Outcome } from '../engine/constants.ts';
import { type Definition, RuntimeParametersSchema } from '../engine/definition.ts';
import { matchesPattern } from '../engine/event-pattern.ts';
import { completionStateOf } from '../engine/lifecycle.ts';
import { MAX_AGGREGATE_ID_BYTES } from '../engine/limits.ts';
import { BadMessageError } from '../errors.ts';
import type { AggregateHeader, RawMessage } from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';
import { completeAggregate } from './complete.ts';
import { type FaninContext, parseJsonBody, resolvePayload, routeIfUnfixable } from './context.ts';

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
};

/** The control bus's commands (seed 002's control channel). See docs/wire-contract.md. */
export const ControlCommandSchema = z.discriminatedUnion('command', [
  z.strictObject({ command: z.literal('purge'), ...Target }),
  z.strictObject({ command: z.literal('complete'), ...Target }),
  z.strictObject({ command: z.literal('list'), definition: z.string().min(1).optional() }),
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
export async function handleControl(ctx: FaninContext, raw: RawMessage): Promise<void> {
  let command: ControlCommand;
  try {
    command = await toCommand(ctx, parseJsonBody(await resolvePayload(ctx, raw)));
  } catch (error) {
    await routeIfUnfixable(ctx, 'control', raw, error);
    return;
  }
  const id = `control/${raw.messageId}`;
  if (command.command === 'list') {
    // One read of the index for every definition, not one per definition.
    const aggregates = (await ctx.store.listActive(command.definition))
      .filter((header) => completionStateOf(header) === 'open')
      .map(activeSummary);
    await ctx.outputs.publish(QueueRole.STATUS, {
      id,
      type: 'fanin.status.active',
      at: ctx.clock(),
      aggregates,
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
  const targets = await targetsOf(ctx, command);
  const affected: string[] = [];
  for (const aggregateId of targets) {
    if (await completeAggregate(ctx, aggregateId, outcome)) affected.push(aggregateId);
  }
  await ctx.outputs.publish(QueueRole.STATUS, {
    id,
    type: 'fanin.control.result',
    command: command.command,
    affected,
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
  }
  if (
    'definition' in command &&
    command.definition !== undefined &&
    !ctx.definitions.has(command.definition)
  ) {
    throw new BadMessageError(`unknown definition "${command.definition}"`);
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

async function targetsOf(
  ctx: FaninContext,
  command: { aggregateId?: string; definition?: string; all?: true },
): Promise<string[]> {
  // Completing ones too: a command redelivered after its invocation crashed mid-completion is
  // what finishes that completion (completeAggregate resumes it once its lease has run out).
  if (command.aggregateId) {
    const header = await ctx.store.getHeader(command.aggregateId);
    return header && completionStateOf(header) !== 'closed' ? [command.aggregateId] : [];
  }
  return (await ctx.store.listActive(command.definition))
    .filter((header) => completionStateOf(header) !== 'closed')
    .map((header) => header.aggregateId);
}

/** How a reason names an event: by its id when it has one. */
function eventName(event: Record<string, unknown>): string {
  return typeof event.id === 'string' && event.id !== '' ? `event ${event.id}` : 'the event';
}
