import { contextFromEnvironment, tracedObservabilityFromEnvironment } from '../shared/app.ts';
import { instrumented, makeFanOutHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'fan-out',
  makeFanOutHandler(contextFromEnvironment),
  tracedObservabilityFromEnvironment,
);
