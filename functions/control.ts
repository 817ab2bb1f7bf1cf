import { contextFromEnvironment, tracedObservabilityFromEnvironment } from '../shared/app.ts';
import { instrumented, makeControlHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'control',
  makeControlHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
