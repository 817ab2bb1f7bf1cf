import { randomUUID } from 'node:crypto';
import type { Target } from '../../../shared/client/connect.ts';
import { RuntimeParametersSchema } from '../../../shared/engine/definition.ts';
import { matchesPattern } from '../../../shared/engine/event-pattern.ts';
import { formatDuration } from '../../describe.ts';
import { listActive } from '../../views.ts';
import {
  type Args,
  type Command,
  CommandError,
  type CommandIO,
  intOption,
  jsonOption,
  numberOption,
  pause,
  stringOption,
  UsageError,
} from '../io.ts';
import { checkDefinition, findRefusal, sendControl, storeOf, waitClosed } from '../shared.ts';
import * as specs from '../specs.ts';

/**
 * The commands that go through the control bus (`purge`, `complete`, `set-parameters`): each sends
 * a command to the control queue and, when asked, waits until the state table shows its effect.
 */

/** Which aggregates a purge/complete names, and the ids to wait for. */
async function targetIds(
  target: Target,
  args: Args,
): Promise<{ command: Record<string, unknown>; ids: string[] }> {
  const aggregateId = stringOption(args, 'aggregate-id');
  const definition = stringOption(args, 'definition');
  const all = args.values.all === true;
  const given = [aggregateId !== undefined, definition !== undefined, all].filter(Boolean).length;
  if (given !== 1) throw new UsageError('give exactly one of --aggregate-id, --definition or --all');
  if (aggregateId) {
    // fanin ignores a command for an aggregate it has no record of: say so instead of "sent".
    if (!(await storeOf(target).getHeader(aggregateId))) {
      throw new CommandError(
        `no aggregate "${aggregateId}": it was never opened, or it closed long enough ago that its tombstone has expired (fanin list shows the active ones)`,
      );
    }
    return { command: { aggregateId }, ids: [aggregateId] };
  }
  if (definition) checkDefinition(target, definition);
  const ids = (await listActive(target.clients.dynamo, target.tableName, definition)).map(
    (a) => a.aggregateId,
  );
  return { command: definition ? { definition } : { all: true }, ids };
}

async function controlAndWait(
  io: CommandIO,
  args: Args,
  target: Target,
  command: Record<string, unknown>,
  ids: readonly string[],
  verb: string,
): Promise<number> {
  const messageId = await sendControl(target, command);
  const sent = { command, messageId, controlQueue: target.queues.control.url };
  if (!args.values.wait) {
    if (io.wantsJson) io.json(sent);
    else
      io.out(
        `sent ${verb} to ${target.queues.control.name} (${messageId}); the result goes to ${target.queues.status.name}`,
      );
    return 0;
  }
  const timeoutMs = numberOption(args, 'timeout', 60) * 1000;
  const result = await waitClosed(io, target, ids, timeoutMs, `${verb}`);
  if (io.wantsJson) {
    io.json({
      ...sent,
      closed: result.closed.map((h) => ({ aggregateId: h.aggregateId, outcome: h.outcome ?? null })),
      open: result.open,
    });
  } else {
    for (const header of result.closed) io.out(`${header.aggregateId}: ${header.outcome ?? 'closed'}`);
    if (ids.length === 0) io.out('no active aggregates matched');
  }
  if (result.open.length > 0) {
    throw new CommandError(`still open after ${formatDuration(timeoutMs)}: ${result.open.join(', ')}`);
  }
  return 0;
}

/** `fanin purge`: end aggregates without a result. */
export const purge: Command = {
  ...specs.purge,
  async run(io, args) {
    const target = await io.target();
    const { command, ids } = await targetIds(target, args);
    return controlAndWait(io, args, target, { command: 'purge', ...command }, ids, 'purge');
  },
};

/** `fanin complete`: the external event / complete command. */
export const complete: Command = {
  ...specs.complete,
  async run(io, args) {
    const target = await io.target();
    let event = jsonOption(args, 'event') as Record<string, unknown> | undefined;
    const source = stringOption(args, 'source');
    if (event === undefined && source !== undefined) {
      const detailType = stringOption(args, 'detail-type');
      if (!detailType) throw new UsageError('--source needs --detail-type');
      event = {
        version: '0',
        id: randomUUID(),
        'detail-type': detailType,
        source,
        account: '000000000000',
        time: new Date().toISOString(),
        region: await target.clients.sqs.config.region(),
        resources: [],
        detail: jsonOption(args, 'detail') ?? {},
      };
    }
    if (event === undefined) {
      const { command, ids } = await targetIds(target, args);
      return controlAndWait(io, args, target, { command: 'complete', ...command }, ids, 'complete');
    }
    if (event === null || typeof event !== 'object' || !('source' in event) || !('detail-type' in event)) {
      throw new UsageError('--event must be an EventBridge event: an object with source and detail-type');
    }
    const detail = event.detail as Record<string, unknown> | undefined;
    let ids: string[] = [];
    if (typeof detail?.aggregateId === 'string') ids = [detail.aggregateId];
    else if (target.definitions) {
      for (const definition of target.definitions.values()) {
        if (definition.externalEventPattern && matchesPattern(definition.externalEventPattern, event)) {
          // The control handler refuses it to the error output; say so before it is sent.
          if (!definition.externalEventCompletesAll) {
            throw new CommandError(
              `the event names no aggregate (detail.aggregateId), and definition "${definition.name}" is not completed whole by an event (externalEventCompletesAll): add --detail '{"aggregateId":"<id>"}'`,
            );
          }
          ids.push(
            ...(await listActive(target.clients.dynamo, target.tableName, definition.name)).map(
              (a) => a.aggregateId,
            ),
          );
        }
      }
    } else if (args.values.wait) {
      io.err(
        '--wait needs detail.aggregateId with --stack (the stack does not tell the CLI its definitions)',
      );
    }
    return controlAndWait(io, args, target, event, ids, 'external event');
  },
};

/** `fanin set-parameters`: runtime parameters of a definition. */
export const setParameters: Command = {
  ...specs.setParameters,
  async run(io, args) {
    const definition = args.positionals[0];
    if (!definition) throw new UsageError('set-parameters needs a definition name');
    const parameters: Record<string, number> = {};
    // The bounds the control handler checks (RuntimeParametersSchema): refused here, before sending.
    const timeoutSeconds = intOption(args, 'timeout-seconds', undefined, boundsOf('timeoutSeconds'));
    if (timeoutSeconds !== undefined) parameters.timeoutSeconds = timeoutSeconds;
    const count = intOption(args, 'count', undefined, boundsOf('count'));
    if (count !== undefined) parameters.count = count;
    const recipientTimeout = intOption(
      args,
      'recipient-timeout-seconds',
      undefined,
      boundsOf('recipientTimeoutSeconds'),
    );
    if (recipientTimeout !== undefined) parameters.recipientTimeoutSeconds = recipientTimeout;
    const threshold = stringOption(args, 'threshold');
    if (threshold !== undefined) {
      if (!Number.isFinite(Number(threshold)))
        throw new UsageError(`--threshold must be a number (given "${threshold}")`);
      parameters.threshold = Number(threshold);
    }
    if (Object.keys(parameters).length === 0 && !args.values.reset) {
      throw new UsageError(
        'give --timeout-seconds, --threshold, --count, --recipient-timeout-seconds or --reset',
      );
    }
    const target = await io.target();
    checkDefinition(target, definition);
    const messageId = await sendControl(target, { command: 'set-parameters', definition, parameters });
    // The control handler applies it within a poll; wait until the stored parameters show it, or
    // its refusal (a count where the completion has none...) is on the error output.
    const deadline = Date.now() + 15_000;
    let applied = false;
    let refusal: string | undefined;
    let lookedAt = 0;
    while (!applied && Date.now() < deadline && !io.signal.aborted) {
      const stored = await storeOf(target).getParameters(definition);
      applied = canonical(stored) === canonical(parameters);
      if (!applied && Date.now() - lookedAt >= 1_000) {
        lookedAt = Date.now();
        refusal = await findRefusal(target, (m) => m.messageId === messageId);
        if (refusal !== undefined) break;
      }
      if (!applied) await pause(250, io.signal);
    }
    if (refusal !== undefined) {
      if (io.wantsJson) io.json({ definition, parameters, messageId, applied, refused: refusal });
      throw new CommandError(
        `${definition}: parameters ${JSON.stringify(parameters)} refused to ${target.queues.error.name}: ${refusal}`,
      );
    }
    if (io.wantsJson) io.json({ definition, parameters, messageId, applied });
    else
      io.out(
        `${definition}: parameters ${JSON.stringify(parameters)} ${applied ? 'applied' : 'sent (not applied yet: is the control consumer running?)'}`,
      );
    return applied ? 0 : 1;
  },
};

/** JSON with sorted keys, to compare parameter objects whatever their key order. */
function canonical(value: object): string {
  return JSON.stringify(Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b))));
}

/** An integer runtime parameter's bounds, as the control handler's schema sets them. */
function boundsOf(name: 'timeoutSeconds' | 'count' | 'recipientTimeoutSeconds'): {
  min: number;
  max: number;
} {
  const schema = RuntimeParametersSchema.shape[name].unwrap();
  return { min: schema.minValue ?? 1, max: schema.maxValue ?? Number.MAX_SAFE_INTEGER };
}
