import { contextFromEnvironment, tracedObservabilityFromEnvironment } from '../shared/app.ts';
import { instrumented, makeTimerHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'timer',
  makeTimerHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
