import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import type { Scheduler } from './scheduler.ts';

/**
 * The sources of time and chance that fanin's code reads without being handed them, neutralised
 * for the length of one run and only inside the scheduler's tasks (outside them, the test runner
 * and the simulation's own code see the real ones):
 *
 * - `Date.now()` and `new Date()` (the drain handler's time budget; JSONata's `$now()` and
 *   `$millis()`): virtual time plus the task's clock skew;
 * - `Math.random()` (the throttling back-off in the state store; JSONata's `$random()`): the seed;
 * - `crypto.randomUUID()` (the completion lease's token, claim-check object keys): the seed
 *   (`node:module`'s `syncBuiltinESMExports` carries the swap to modules that imported it by name);
 * - `setTimeout` / `clearTimeout` (the back-off's sleep, the sweeper's per-item time budget): a
 *   virtual timer on the scheduler.
 *
 * Everything is restored by the returned function; a run never leaves one of these behind.
 */
export function neutralise(scheduler: Scheduler): () => void {
  const RealDate = Date;
  const realRandom = Math.random;
  const realUuid = crypto.randomUUID;
  const realSetTimeout = globalThis.setTimeout;
  const realClearTimeout = globalThis.clearTimeout;
  const inTask = () => scheduler.current() !== undefined;

  class VirtualDate extends RealDate {
    public constructor(...args: unknown[]) {
      if (args.length === 0 && inTask()) super(scheduler.clock());
      else super(...(args as [number]));
    }

    public static override now(): number {
      return inTask() ? scheduler.clock() : RealDate.now();
    }
  }
  globalThis.Date = VirtualDate as DateConstructor;
  Math.random = () => (inTask() ? scheduler.random.next() : realRandom());
  (crypto as { randomUUID: () => string }).randomUUID = () =>
    inTask() ? (scheduler.random.uuid() as ReturnType<typeof realUuid>) : realUuid();
  syncBuiltinESMExports();
  const virtualSetTimeout = (fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (!inTask()) return realSetTimeout(fn, ms, ...args);
    const handle = { cleared: false, ref() {}, unref() {}, hasRef: () => false };
    scheduler.at(scheduler.now + Math.max(0, ms ?? 0), () => {
      if (!handle.cleared) fn(...args);
    });
    virtualTimers.add(handle);
    return handle;
  };
  const virtualTimers = new WeakSet<object>();
  globalThis.setTimeout = virtualSetTimeout as unknown as typeof setTimeout;
  globalThis.clearTimeout = ((handle: unknown) => {
    if (typeof handle === 'object' && handle !== null && virtualTimers.has(handle)) {
      (handle as { cleared: boolean }).cleared = true;
      return;
    }
    realClearTimeout(handle as NodeJS.Timeout);
  }) as typeof clearTimeout;
  return () => {
    globalThis.Date = RealDate;
    Math.random = realRandom;
    (crypto as { randomUUID: typeof realUuid }).randomUUID = realUuid;
    syncBuiltinESMExports();
    globalThis.setTimeout = realSetTimeout;
    globalThis.clearTimeout = realClearTimeout;
  };
}
