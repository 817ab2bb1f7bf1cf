import { distributorFromEnvironment } from '../shared/app.ts';
import { makeDistributorHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeDistributorHandler(distributorFromEnvironment);
