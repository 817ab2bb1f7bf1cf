import type { Tracer } from '@aws-lambda-powertools/tracer';
import { describe, expect, it } from 'vitest';
import {
  createTracer,
  serviceName,
  traced,
  tracingEnabled,
} from '../../../../shared/observability/tracing.ts';

/**
 * Tracing (docs/observability.md, "Tracing"): off unless `POWERTOOLS_TRACE_ENABLED=true`; each
 * invocation in a subsegment `## <handler>` annotated with the cold start and the service, an
 * error recorded on it.
 */
describe('whether the handlers trace', () => {
  it.each<[NodeJS.ProcessEnv, boolean]>([
    [{}, false],
    [{ POWERTOOLS_TRACE_ENABLED: 'true' }, true],
    [{ POWERTOOLS_TRACE_ENABLED: 'TRUE' }, true],
    [{ POWERTOOLS_TRACE_ENABLED: 'false' }, false],
    [{ POWERTOOLS_TRACE_ENABLED: '1' }, false],
  ])('%j: %s', (env, enabled) => {
    expect(tracingEnabled(env)).toBe(enabled);
  });

  it('builds no tracer when tracing is off', async () => {
    expect(await createTracer({})).toBeUndefined();
  });
});

describe('the service name', () => {
  it('is POWERTOOLS_SERVICE_NAME, else fanin', () => {
    expect(serviceName({ POWERTOOLS_SERVICE_NAME: 'orders-stack' })).toBe('orders-stack');
    expect(serviceName({})).toBe('fanin');
    expect(serviceName({ POWERTOOLS_SERVICE_NAME: '' })).toBe('fanin');
  });
});

/** A tracer double that records what the invocation did to its segments. */
function aTracer(enabled = true): { tracer: Tracer; calls: string[] } {
  const calls: string[] = [];
  const segment = {
    name: 'function',
    addNewSubsegment: (name: string) => {
      calls.push(`open ${name}`);
      return { name, close: () => calls.push(`close ${name}`) };
    },
  };
  const tracer = {
    isTracingEnabled: () => enabled,
    getSegment: () => segment,
    setSegment: (s: { name: string }) => calls.push(`set ${s.name}`),
    annotateColdStart: () => calls.push('annotate cold start'),
    addServiceNameAnnotation: () => calls.push('annotate service'),
    addErrorAsMetadata: (e: Error) => calls.push(`error ${e.message}`),
  };
  return { tracer: tracer as unknown as Tracer, calls };
}

describe('a traced invocation', () => {
  it('just runs the handler without a tracer', async () => {
    expect(await traced(undefined, 'reply', async () => 7)).toBe(7);
  });

  it('just runs the handler when the tracer is disabled', async () => {
    const { tracer, calls } = aTracer(false);
    expect(await traced(tracer, 'reply', async () => 7)).toBe(7);
    expect(calls).toEqual([]);
  });

  it('runs in a subsegment ## <handler>, annotated, closed and the segment restored', async () => {
    const { tracer, calls } = aTracer();
    expect(await traced(tracer, 'reply', async () => 'done')).toBe('done');
    expect(calls).toEqual([
      'open ## reply',
      'set ## reply',
      'annotate cold start',
      'annotate service',
      'close ## reply',
      'set function',
    ]);
  });

  it('records an error on the subsegment and throws it on', async () => {
    const { tracer, calls } = aTracer();
    await expect(
      traced(tracer, 'timer', async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(calls).toContain('error boom');
    expect(calls.slice(-2)).toEqual(['close ## timer', 'set function']);
  });
});
