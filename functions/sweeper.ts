import { contextFromEnvironment } from '../shared/app.ts';
import { makeSweeperHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeSweeperHandler(contextFromEnvironment);
