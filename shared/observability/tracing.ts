import type { Tracer } from '@aws-lambda-powertools/tracer';
import { DEFAULT_SERVICE_NAME, ObservabilityEnv } from './metric-names.ts';

/**
 * Whether the handlers trace with X-Ray: only when the environment says so
 * (`POWERTOOLS_TRACE_ENABLED=true`, set by the stack's `tracing` prop with Lambda active tracing).
 * Powertools' own default is on; fanin's is off, so a stack without X-Ray permissions never tries.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[ObservabilityEnv.TRACE_ENABLED]?.toLowerCase() === 'true';
}

/** The service name of metrics and traces: `POWERTOOLS_SERVICE_NAME`, else `fanin`. */
export function serviceName(env: NodeJS.ProcessEnv = process.env): string {
  return env[ObservabilityEnv.SERVICE_NAME] || DEFAULT_SERVICE_NAME;
}

/**
 * The Powertools Tracer of a Lambda function when tracing is enabled, else undefined. It is
 * imported only then: the X-Ray SDK it loads costs about 50 ms of cold start, for nothing when
 * tracing is off. Outgoing HTTP is not patched globally: fanin's only calls are AWS SDK calls,
 * captured per client.
 */
export async function createTracer(env: NodeJS.ProcessEnv = process.env): Promise<Tracer | undefined> {
  if (!tracingEnabled(env)) return undefined;
  const { Tracer } = await import('@aws-lambda-powertools/tracer');
  return new Tracer({ serviceName: serviceName(env), captureHTTPsRequests: false });
}

/**
 * Runs one invocation of `handler` in a subsegment of the function's segment (`## <name>`),
 * annotated with the cold start and the service, the error recorded when it throws. Without a
 * tracer (or outside Lambda, where there is no segment) it just runs the handler.
 */
export async function traced<T>(
  tracer: Tracer | undefined,
  name: string,
  handler: () => Promise<T>,
): Promise<T> {
  const segment = tracer?.isTracingEnabled() ? tracer.getSegment() : undefined;
  if (!tracer || !segment) return handler();
  const subsegment = segment.addNewSubsegment(`## ${name}`);
  tracer.setSegment(subsegment);
  tracer.annotateColdStart();
  tracer.addServiceNameAnnotation();
  try {
    return await handler();
  } catch (error) {
    tracer.addErrorAsMetadata(error as Error);
    throw error;
  } finally {
    subsegment.close();
    tracer.setSegment(segment);
  }
}
