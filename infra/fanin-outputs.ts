import { CfnOutput, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { QueueRole } from '../shared/topology/topology.ts';
import type { HandlerScope } from './fanin-handlers.ts';

/** What the outputs name: the Fanin construct's resources, as the handlers are built from them. */
export type OutputsScope = HandlerScope;

/** The output key of each queue role: `<construct><Role>QueueUrl`. */
const ROLE_KEYS: Readonly<Record<QueueRole, string>> = {
  [QueueRole.INGRESS]: 'Ingress',
  [QueueRole.CONTROL]: 'Control',
  [QueueRole.TIMER]: 'Timer',
  [QueueRole.BACKLOG]: 'Backlog',
  [QueueRole.COMPLETED]: 'Completed',
  [QueueRole.TIMED_OUT]: 'TimedOut',
  [QueueRole.UNKNOWN]: 'Unknown',
  [QueueRole.LATE]: 'Late',
  [QueueRole.ERROR]: 'Error',
  [QueueRole.STATUS]: 'Status',
};

/** What a producer, a responder, an output consumer or an operator reads from each queue. */
const ROLE_USES: Readonly<Record<QueueRole, string>> = {
  [QueueRole.INGRESS]: 'producers send requests here',
  [QueueRole.CONTROL]: 'control commands (the fanin CLI) go here',
  [QueueRole.TIMER]: "fanin's own deadlines",
  [QueueRole.BACKLOG]: 'replies waiting for a reply partition (the distributor feeds them)',
  [QueueRole.COMPLETED]: 'completed results',
  [QueueRole.TIMED_OUT]: 'timed-out results',
  [QueueRole.UNKNOWN]: 'replies no aggregate claimed',
  [QueueRole.LATE]: 'replies that came after their aggregate closed',
  [QueueRole.ERROR]: 'refused input and failed aggregates',
  [QueueRole.STATUS]: 'purged aggregates and control answers',
};

/**
 * The stack outputs of a Fanin construct: what a producer, a responder, an output consumer and the
 * CLI must find. Each key is the construct's path in its stack, letters and digits only, then the
 * name (`FaninIngressQueueUrl` for a construct `Fanin` at the stack's top), so two instances in
 * one stack never share a key and a key does not change between deployments:
 * - `<id>Prefix`: the prefix every name starts with, what `fanin --stack` takes;
 * - `<id><Role>QueueUrl` for every queue (ingress, control, timer, backlog, the six outputs);
 * - `<id>ReplyQueue<i>Url` for each reply partition and `<id>ReplyPartitions`, their number;
 * - `<id>StateTableName`, `<id>PayloadBucketName`, and `<id>OutputBusName` when there is a bus.
 */
export function createOutputs(scope: OutputsScope): Readonly<Record<string, CfnOutput>> {
  const stack = Stack.of(scope);
  const path = scope.node.path.slice(stack.node.path.length).replace(/[^A-Za-z0-9]/g, '');
  const outputsScope = new Construct(scope, 'Outputs');
  const outputs: Record<string, CfnOutput> = {};
  const output = (name: string, value: string, description: string): void => {
    const out = new CfnOutput(outputsScope, name, {
      value,
      description: `fanin (${scope.topology.prefix}): ${description}`,
    });
    out.overrideLogicalId(`${path}${name}`);
    outputs[name] = out;
  };
  const { topology } = scope;
  output('Prefix', topology.prefix, 'the prefix of every name; fanin --stack <this>');
  for (const role of Object.values(QueueRole)) {
    output(
      `${ROLE_KEYS[role]}QueueUrl`,
      scope.queues[role].queue.queueUrl,
      `${role} queue: ${ROLE_USES[role]}`,
    );
  }
  scope.replyPartitions.forEach((partition, index) => {
    output(
      `ReplyQueue${index}Url`,
      partition.queue.queueUrl,
      `reply partition ${index} (responders reply to the fanin-reply-to a sub-request names)`,
    );
  });
  output(
    'ReplyPartitions',
    String(scope.replyPartitions.length),
    'how many reply partitions (ReplyQueue<i>Url)',
  );
  output('StateTableName', scope.table.tableName, 'the state table');
  output('PayloadBucketName', scope.bucket.bucketName, 'the claim-check bucket; fanin --bucket <this>');
  if (scope.eventBus) output('OutputBusName', scope.eventBus.eventBusName, 'the bus outputs are put on');
  return outputs;
}
