import { contextFromEnvironment } from '../shared/app.ts';
import { makeFanOutHandler } from './handlers.ts';

/** Lambda entry point. */
export const handler = makeFanOutHandler(contextFromEnvironment);
