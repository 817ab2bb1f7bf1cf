import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import type { Seal, StateStore } from '../../shared/ports.ts';
import type { FaninContext } from '../../shared/use-cases/context.ts';
import { type AwsCall, type CrashMode, DYNAMO_WRITES, InjectedCrash, TERMINAL_ROLES } from './aws-probe.ts';
import { aws } from './clients.ts';
import type { FaninUnderTest, OutputBody, TerminalMode } from './fanin.ts';

export { type CrashMode, InjectedCrash } from './aws-probe.ts';

/**
 * Wraps every port of a context (state store, outputs, timers, sender, payloads) so that the
 * `crashAt`-th port call throws {@link InjectedCrash} *instead of* running. Coarser than the
 * SDK-level failpoints of {@link eachFailpoint} (one port call hides several AWS calls), kept for
 * tests that reason in port calls.
 */
export function crashingContext(
  ctx: FaninContext,
  crashAt: number,
): { ctx: FaninContext; calls: string[]; crashed: () => boolean } {
  const calls: string[] = [];
  let crashed = false;
  const wrap = <T extends object>(port: T, name: string): T =>
    new Proxy(port, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const call = `${name}.${String(property)}`;
          calls.push(call);
          if (!crashed && calls.length === crashAt) {
            crashed = true;
            return Promise.reject(new InjectedCrash(call));
          }
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return {
    ctx: {
      ...ctx,
      store: wrap(ctx.store, 'store'),
      outputs: wrap(ctx.outputs, 'outputs'),
      timers: wrap(ctx.timers, 'timers'),
      sender: wrap(ctx.sender, 'sender'),
      ...(ctx.payloads ? { payloads: wrap(ctx.payloads, 'payloads') } : {}),
    },
    calls,
    crashed: () => crashed,
  };
}

/** One run of a scenario under a failpoint. */
export interface FailpointRun {
  /** The failpoint: the k-th AWS call the system made in this run. */
  readonly k: number;
  readonly mode: CrashMode;
  /** The call that crashed (absent when the run made fewer than k calls). */
  readonly crashed?: AwsCall;
  /** AWS calls the system made during the scenario. */
  readonly calls: number;
  /**
   * How strictly the run's terminal output may be counted: `content` only when the crash fell
   * between a terminal publication and the first state write after it (the record of it), where
   * a re-publication of the same content is unavoidable; `strict` everywhere else.
   */
  readonly terminalMode: TerminalMode;
}

/**
 * Runs a scenario with a crash at AWS call k (SDK middleware, every service), for k = 1, 2, …
 * and both modes — `before` (the call is never sent: the process died before it) and `after`
 * (the call reached the emulator, the process died before seeing the answer) — until a run
 * makes fewer calls than k. After each run the "restarted" system gets its chances: the test
 * clock passes the completion lease, the sweeper runs, SQS redelivers (twice); then `check`
 * asserts the invariants, with {@link FailpointRun.terminalMode} telling how strictly to count.
 *
 * @returns the number of runs
 */
export async function eachFailpoint(
  fanin: FaninUnderTest,
  scenario: (id: string, k: number, mode: CrashMode) => Promise<void>,
  check: (id: string, run: FailpointRun) => Promise<void>,
  options: { readonly modes?: readonly CrashMode[]; readonly maxK?: number } = {},
): Promise<number> {
  let runs = 0;
  for (const mode of options.modes ?? (['before', 'after'] as const)) {
    for (let k = 1; k <= (options.maxK ?? 1000); k += 1) {
      const id = `fp-${mode}-${k}-${Math.random().toString(36).slice(2, 8)}`;
      const start = fanin.probe.now;
      fanin.probe.crashAt(k, mode);
      try {
        await scenario(id, k, mode);
      } catch (error) {
        // A use case called directly (not through a handler) lets the crash through.
        if (!(error instanceof InjectedCrash)) throw error;
      }
      const calls = fanin.probe.systemCalls;
      const crashed = fanin.probe.disarm();
      await restart(fanin);
      const run: FailpointRun = {
        k,
        mode,
        ...(crashed ? { crashed } : {}),
        calls,
        terminalMode: crashed && inPublishWindow(fanin, id, start, crashed) ? 'content' : 'strict',
      };
      runs += 1;
      try {
        await check(id, run);
      } catch (error) {
        const where = crashed ? `${mode} ${crashed.name} (call ${k})` : `no crash (${calls} calls)`;
        (error as Error).message = `failpoint ${where}: ${(error as Error).message}`;
        throw error;
      }
      if (!crashed) break;
    }
  }
  return runs;
}

/** The "restarted" system: the lease passes, the sweeper runs, SQS redelivers. */
export async function restart(fanin: FaninUnderTest): Promise<void> {
  for (let round = 0; round < 2; round += 1) {
    fanin.clock.advance(fanin.ctx.completionLeaseMs + 1);
    await fanin.sweep().catch(() => undefined);
    await fanin.drain();
  }
}

/**
 * True when the crash fell between a terminal publication of this aggregate (inclusive, for a
 * crash after it) and the first state write after it (inclusive, for a crash before it).
 */
function inPublishWindow(
  fanin: FaninUnderTest,
  aggregateId: string,
  since: number,
  crashed: AwsCall,
): boolean {
  const published = fanin.probe.published.filter(
    (p) =>
      p.seq > since &&
      p.seq <= crashed.seq &&
      p.body.id === `${aggregateId}/result` &&
      (p.channel === 'eventbridge' || TERMINAL_ROLES.includes(p.channel)),
  );
  const first = published[0];
  if (!first) return false;
  if (first.seq === crashed.seq) return crashed.crashed === 'after';
  const writes = fanin.probe.calls.filter(
    (c) => c.system && c.seq > first.seq && c.seq <= crashed.seq && DYNAMO_WRITES.has(c.name),
  );
  // Crashed at the record itself (before it landed), or at another publication before it.
  return (
    writes.length === 0 ||
    (writes.length === 1 && writes[0]?.seq === crashed.seq && crashed.crashed === 'before')
  );
}

/**
 * What a result output says its members are: `members`, or the reply ids of a collected result
 * (empty when it does not say).
 */
export function membersOf(output: OutputBody): string[] {
  return membersIfKnown(output) ?? [];
}

/** {@link membersOf}, but undefined when the output does not list them (a custom or condensed result). */
function membersIfKnown(output: OutputBody): string[] | undefined {
  if (Array.isArray(output.members)) return (output.members as unknown[]).map(String);
  if (Array.isArray(output.result)) {
    return (output.result as { replyId?: unknown }[])
      .filter((r) => r && typeof r === 'object' && r.replyId !== undefined)
      .map((r) => String(r.replyId));
  }
  return undefined;
}

/**
 * The invariants every adversity test checks, on the recorder (below SQS's deduplication):
 * - exactly one terminal content for the aggregate (strictly one publication unless `mode` says
 *   the test crashed between publish and record);
 * - every reply sent to it (as recorded) is either a member of the result or on the late output;
 * - `counts.received` equals the number of distinct members;
 * - nothing on the error output for it unless `expectError`;
 * - nothing in any dead-letter queue.
 * @returns the terminal output
 */
export async function expectInvariants(
  fanin: FaninUnderTest,
  aggregateId: string,
  options: { mode?: TerminalMode; expectError?: boolean; replyIds?: readonly string[] } = {},
): Promise<OutputBody> {
  const { output } = fanin.expectExactlyOneTerminalOutput(aggregateId, options.mode ?? 'strict');
  const members = membersIfKnown(output);
  const received = (output.counts as { received?: number } | undefined)?.received;
  if (members === undefined) {
    // The result does not list its members: all that can be checked is the count.
    if (options.replyIds)
      expect(received, `${aggregateId}: counts.received`).toBe(new Set(options.replyIds).size);
    return finish(fanin, aggregateId, options, output);
  }
  expect(new Set(members).size, `${aggregateId}: members listed twice`).toBe(members.length);
  expect(received, `${aggregateId}: counts.received`).toBe(members.length);
  const sent =
    options.replyIds ??
    fanin
      .sentInputs('reply')
      .filter((m) => m.attributes['fanin-aggregate-id']?.StringValue === aggregateId)
      .map((m) => m.attributes['fanin-reply-id']?.StringValue ?? `message:${m.messageId}`);
  const late = new Set(
    fanin
      .published('late')
      .filter((p) => p.body.aggregateId === aggregateId)
      .map((p) => String(p.body.replyId)),
  );
  for (const replyId of new Set(sent)) {
    if (replyId.startsWith('message:')) continue;
    expect(
      members.includes(replyId) || late.has(replyId),
      `${aggregateId}: reply ${replyId} is neither counted nor late (members ${members.join(',')})`,
    ).toBe(true);
  }
  return finish(fanin, aggregateId, options, output);
}

async function finish(
  fanin: FaninUnderTest,
  aggregateId: string,
  options: { expectError?: boolean },
  output: OutputBody,
): Promise<OutputBody> {
  if (!options.expectError) {
    const errors = fanin.published('error').filter((p) => p.body.aggregateId === aggregateId);
    expect(errors.map((e) => e.text)).toEqual([]);
  }
  const errors = fanin.logs.filter((l) => l.level === 'error').slice(-5);
  expect(await fanin.deadLetters(), `dead letters; last errors logged: ${JSON.stringify(errors)}`).toEqual(
    {},
  );
  return output;
}

/**
 * Asserts that an aggregate ended cleanly: its header is a tombstone with a TTL, and every other
 * item of it (request, replies, marks, held replies) carries a TTL too — nothing of it is left
 * for ever (reply items are written once and expire; none is rewritten at close).
 */
export async function expectClosedCleanly(fanin: FaninUnderTest, aggregateId: string): Promise<void> {
  const { Items = [] } = await aws.dynamo.send(
    new QueryCommand({
      TableName: fanin.provisioned.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `A#${aggregateId}` },
      ConsistentRead: true,
    }),
  );
  const header = Items.find((i) => i.sk === 'H');
  expect(header).toMatchObject({ status: 'closed', expiresAt: expect.any(Number) });
  for (const item of Items.filter((i) => i.sk !== 'H')) {
    expect(item.expiresAt, `${String(item.sk)} of ${aggregateId} has no TTL`).toEqual(expect.any(Number));
  }
}

/** The context with its store's `seal` running `before` first (a reply racing the seal). */
export function sealingAfter(ctx: FaninContext, before: () => Promise<void>): FaninContext {
  const store = new Proxy(ctx.store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'seal' || typeof value !== 'function') return value;
      return async (aggregateId: string, seal: Seal) => {
        await before();
        return (value as StateStore['seal']).call(target, aggregateId, seal);
      };
    },
  });
  return { ...ctx, store };
}
