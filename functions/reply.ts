import { contextFromEnvironment, tracedObservabilityFromEnvironment } from '../shared/app.ts';
import { instrumented, makeReplyHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'reply',
  makeReplyHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
