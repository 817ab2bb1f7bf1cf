import type { FaninContext } from '../../shared/use-cases/context.ts';

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
