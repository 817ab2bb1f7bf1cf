import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { documentClient } from '../../shared/aws/clients.ts';
import type { FaninContext } from '../../shared/use-cases/context.ts';
import type { FaninUnderTest } from './fanin.ts';

/** The error a failpoint throws: stands for a Lambda that died between two external calls. */
export class InjectedCrash extends Error {
  public constructor(public readonly call: string) {
    super(`injected crash at ${call}`);
    this.name = 'InjectedCrash';
  }
}

/**
 * Wraps every port of a context (state store, outputs, timers, sender) so that the `crashAt`-th
 * external call throws {@link InjectedCrash} *instead of* running — the process died before
 * that write. Each call is counted once; after the crash the context behaves normally, as a
 * fresh Lambda would on redelivery. `calls` lists the calls made, for the test's report.
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
    },
    calls,
    crashed: () => crashed,
  };
}

/**
 * Runs a scenario with a crash at external call k, for k = 1, 2, … until a run makes fewer calls
 * than k (every failpoint has then been hit once). After each run the "restarted" system gets
 * its chances: the completion lease passes, the sweeper runs, SQS redelivers; then `check`
 * asserts the invariants. Returns the number of runs.
 */
export async function eachFailpoint(
  fanin: FaninUnderTest,
  scenario: (id: string, k: number) => Promise<void>,
  check: (id: string) => Promise<void>,
): Promise<number> {
  const healthy = fanin.ctx;
  for (let k = 1; ; k += 1) {
    const id = `crash-${k}-${Math.random().toString(36).slice(2, 8)}`;
    const crashing = crashingContext(healthy, k);
    fanin.ctx = crashing.ctx;
    try {
      await scenario(id, k);
    } finally {
      fanin.ctx = healthy;
    }
    fanin.clock.advance(healthy.completionLeaseMs + 1);
    await fanin.sweep();
    await fanin.drain();
    await check(id);
    if (!crashing.crashed()) return k;
  }
}

/**
 * Asserts that an aggregate ended cleanly: its header is a tombstone with a TTL, its request and
 * held replies are gone, and each reply is a payload-free marker expiring with the tombstone —
 * nothing of it is left without a TTL.
 */
export async function expectClosedCleanly(fanin: FaninUnderTest, aggregateId: string): Promise<void> {
  const { Items = [] } = await documentClient().send(
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
    expect(String(item.sk)).toMatch(/^R#/);
    expect(item).toMatchObject({ closed: true, expiresAt: header?.expiresAt });
    expect(item.payload).toBeUndefined();
  }
}
