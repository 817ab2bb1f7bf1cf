import { contextFromEnvironment } from '../shared/app.ts';
import { makeReplyHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeReplyHandler(contextFromEnvironment);
