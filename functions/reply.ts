import type { SQSEvent } from 'aws-lambda';
import {
  contextFromEnvironment,
  drainSourceFromEnvironment,
  tracedObservabilityFromEnvironment,
} from '../shared/app.ts';
import {
  instrumented,
  isReplyDrainEvent,
  makeReplyDrainHandler,
  makeReplyHandler,
  type ReplyDrainEvent,
} from './handlers.ts';

const records = instrumented(
  'reply',
  makeReplyHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
const drain = instrumented(
  'reply-drain',
  makeReplyDrainHandler(contextFromEnvironment, drainSourceFromEnvironment),
  tracedObservabilityFromEnvironment,
);

/**
 * Lambda entry point: a batch from a reply partition's event source, or a drain schedule's event
 * for a partition drained on a schedule (`replyDrainIntervalSeconds`).
 */
export const handler = (
  event: SQSEvent | ReplyDrainEvent,
  invocation?: Parameters<typeof drain>[1],
): Promise<unknown> => (isReplyDrainEvent(event) ? drain(event, invocation) : records(event as SQSEvent));
