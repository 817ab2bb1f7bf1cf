import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import { QueueDrainer } from '../../local/drainer.ts';
import { QueuePoller } from '../../local/poller.ts';
import { Distributor } from '../../shared/partitions/distributor.ts';
import {
  CALLS_DIR_VARIABLE,
  type FunctionName,
  flushRecords,
  installRecorder,
  recordTopology,
  runAs,
} from './call-recorder.ts';
import { FaninUnderTest } from './fanin.ts';

/**
 * Setup file of the integration project: records every AWS call of the test file it runs before
 * (test/support/call-recorder.ts), for the policy proof that test/support/policy-global-setup.ts
 * runs after the suite. Nothing of the product is changed: the SDK's `send`, and the local
 * stand-ins for Lambda's invokers (an SQS event source, a drain schedule, the distributor's
 * schedule), are wrapped so each call is known as the function whose role would make it on AWS;
 * each fanin a test starts is recorded with its topology, so its resources map onto a stack
 * synthesized with the same shape.
 */

const dir = process.env[CALLS_DIR_VARIABLE];
const WRAPPED = Symbol.for('fanin.callRecorder.wrapped');

/** The function an SQS event source on this queue invokes (by the topology's queue names). */
export function consumerOf(queueUrl: string): FunctionName | undefined {
  const name = queueUrl.slice(queueUrl.lastIndexOf('/') + 1);
  const role = /-(ingress|control|timer|reply-\d+)(\.fifo)?$/.exec(name)?.[1];
  if (role === 'ingress') return 'fanOut';
  if (role === 'control') return 'control';
  if (role === 'timer') return 'timer';
  return role === undefined ? undefined : 'reply';
}

/** Replaces a method of a class with one that runs the original as `fnOf(this)` (once per class). */
function runMethodAs<T extends object>(
  prototype: T,
  method: keyof T & string,
  fnOf: (self: T) => FunctionName | undefined,
): void {
  const original = prototype[method] as ((...args: unknown[]) => unknown) & { [WRAPPED]?: true };
  if (original[WRAPPED]) return;
  const wrapped = function (this: T, ...args: unknown[]) {
    const fn = fnOf(this);
    return fn ? runAs(fn, () => original.apply(this, args)) : original.apply(this, args);
  };
  Object.assign(wrapped, { [WRAPPED]: true });
  Object.defineProperty(prototype, method, { value: wrapped, writable: true, configurable: true });
}

if (dir) {
  installRecorder(dir);
  // Lambda's event source mapping receives, invokes and deletes with the function's role.
  runMethodAs(QueuePoller.prototype, 'pollOnce', (poller) =>
    consumerOf((poller as unknown as { options: { queueUrl: string } }).options.queueUrl),
  );
  // A drain schedule invokes the reply function; the distributor's schedule, the distributor.
  runMethodAs(QueueDrainer.prototype, 'drainOnce', () => 'reply');
  runMethodAs(Distributor.prototype, 'cycle', () => 'distributor');

  const start = FaninUnderTest.start;
  if (!(start as { [WRAPPED]?: true })[WRAPPED]) {
    const recorded: typeof start = async (definitions, options = {}) => {
      const fanin = await start.call(FaninUnderTest, definitions, options);
      const { overrides: _overrides, claimCheckThresholdBytes: _threshold, ...topologyOptions } = options;
      const targets = [...fanin.topology.definitions.values()].flatMap((d) =>
        d.fanOut?.type === 'splitter'
          ? [d.fanOut.target]
          : d.fanOut?.type === 'recipient-list'
            ? [...(d.fanOut.recipients ?? [])]
            : [],
      );
      // The completers send cancellation notices and retries where the sub-requests went.
      const cancelling = [...fanin.topology.definitions.values()].filter(
        (d) => d.cancelOutstanding || d.responders?.retry !== undefined,
      );
      const cancelTargets = cancelling.flatMap((d) =>
        d.fanOut?.type === 'splitter'
          ? [d.fanOut.target]
          : d.fanOut?.type === 'recipient-list'
            ? [...(d.fanOut.recipients ?? [])]
            : [],
      );
      const cancelsNamed = cancelling.some(
        (d) => d.fanOut?.type === 'recipient-list' && !d.fanOut.recipients,
      );
      const testPath = expect.getState().testPath;
      recordTopology({
        prefix: fanin.topology.prefix,
        options: topologyOptions,
        targets,
        ...(cancelTargets.length > 0 ? { cancelTargets } : {}),
        ...(cancelsNamed ? { cancelsNamed } : {}),
        ...(testPath ? { testFile: relative(process.cwd(), testPath) } : {}),
      });
      return fanin;
    };
    Object.assign(recorded, { [WRAPPED]: true });
    FaninUnderTest.start = recorded;
  }
  afterAll(() => flushRecords());
}
