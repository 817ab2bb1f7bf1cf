import { Logger } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';
import { serviceName } from './tracing.ts';

let instance: Logger | undefined;

/**
 * The one Powertools Logger of a Lambda function's execution environment: the use cases' log
 * (`powertoolsLog()` in shared/app.ts) and the entry point's {@link addLambdaContext} share it, so
 * every line an invocation logs carries that invocation's Lambda context. Its level is
 * `POWERTOOLS_LOG_LEVEL` (default INFO), read by Powertools when it is built.
 */
export function functionLogger(): Logger {
  instance ??= new Logger({ serviceName: serviceName() });
  return instance;
}

/**
 * Forgets the function's logger, as a new execution environment starts without one: the next
 * {@link functionLogger} builds a new one, whose first Lambda context is a cold start again. For
 * tests that share one module graph across files (a worker that already ran an invocation).
 */
export function newExecutionEnvironment(): void {
  instance = undefined;
}

/** True for Lambda's invocation context (the local runtime and tests call handlers without one). */
function isLambdaContext(value: unknown): value is Context {
  if (typeof value !== 'object' || value === null) return false;
  const context = value as Partial<Context>;
  return typeof context.awsRequestId === 'string' && typeof context.functionName === 'string';
}

/**
 * Adds an invocation's Lambda context to every line `logger` writes until the next invocation
 * replaces it: `function_request_id`, `function_name`, `function_arn`, `function_memory_size`,
 * `function_version` and `cold_start` (true on the first invocation of the execution environment
 * only). Does nothing without a Lambda context.
 */
export function addLambdaContext(logger: Logger, invocation: unknown): void {
  if (isLambdaContext(invocation)) logger.addContext(invocation);
}
