import type { Topology } from '../shared/topology/topology.ts';
import {
  ENV_BUDGET_BYTES,
  ENV_MARGIN_BYTES,
  type EnvironmentOptions,
  environmentSizeBound,
  LAMBDA_ENV_LIMIT_BYTES,
} from './handler-environment.ts';

/**
 * The most reply partitions whose environment fits {@link ENV_BUDGET_BYTES} with this topology's
 * prefix, queues and options: 0 when not even one does. Partitions are only removed from the
 * topology's own list, so their names are exactly those a smaller `replyPartitions` would give.
 */
export function maxReplyPartitionsThatFit(topology: Topology, options: EnvironmentOptions = {}): number {
  for (let count = topology.replyPartitions.length; count > 0; count--) {
    const smaller: Topology = { ...topology, replyPartitions: topology.replyPartitions.slice(0, count) };
    if (environmentSizeBound(smaller, options) <= ENV_BUDGET_BYTES) return count;
  }
  return 0;
}

/**
 * Lambda refuses a function whose environment exceeds 4 KB: say so at synth, not at deploy. The
 * bound counts every variable the handlers get, with the longest value each deploy-time name can
 * take, queue URLs in LocalStack's longer form included (see handler-environment.ts), and must stay
 * {@link ENV_MARGIN_BYTES} under the limit. The message names how many partitions fit.
 */
export function checkEnvironmentSize(topology: Topology, options: EnvironmentOptions = {}): void {
  const size = environmentSizeBound(topology, options);
  if (size <= ENV_BUDGET_BYTES) return;
  const partitions = topology.replyPartitions.length;
  const fit = maxReplyPartitionsThatFit(topology, options);
  const recipients = options.recipientAccounts?.length ?? 0;
  const advice =
    fit > 0
      ? `at most ${fit} reply partitions fit with this prefix and these options: use ${fit} or fewer, a shorter prefix or fewer recipientAccounts`
      : 'not even one reply partition fits with this prefix and these options: use a shorter prefix or fewer recipientAccounts';
  throw new Error(
    `replyPartitions ${partitions} with prefix "${topology.prefix}" makes the handlers' environment up to ${size} bytes (queue URLs counted in their longest form, LocalStack's), over the ${ENV_BUDGET_BYTES} bytes allowed (Lambda's ${LAMBDA_ENV_LIMIT_BYTES}-byte limit less a ${ENV_MARGIN_BYTES}-byte margin): ${advice} (given ${recipients} recipient accounts)`,
  );
}
