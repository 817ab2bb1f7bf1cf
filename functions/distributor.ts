import {
  distributorFromEnvironment,
  observabilityFromEnvironment,
  tracedObservabilityFromEnvironment,
} from '../shared/app.ts';
import { instrumented, makeDistributorHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = instrumented(
  'distributor',
  makeDistributorHandler(distributorFromEnvironment, () => observabilityFromEnvironment().metrics),
  tracedObservabilityFromEnvironment,
);
