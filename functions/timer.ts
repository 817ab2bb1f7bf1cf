import { contextFromEnvironment } from '../shared/app.ts';
import { makeTimerHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeTimerHandler(contextFromEnvironment);
