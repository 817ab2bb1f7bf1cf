import { contextFromEnvironment } from '../shared/app.ts';
import { makeControlHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeControlHandler(contextFromEnvironment);
