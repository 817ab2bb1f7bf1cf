import { contextFromEnvironment, tracedObservabilityFromEnvironment } from '../shared/app.ts';
import { instrumented, makeSweeperHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'sweeper',
  makeSweeperHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
