import { describe, expect, it } from 'vitest';
import {
  currentTraceHeader,
  traceEventField,
  traceSystemAttributes,
  validTraceHeader,
  withTraceHeader,
} from '../../../../shared/observability/trace-context.ts';

/**
 * The trace carried from a message to what handling it sends (docs/observability.md, "Tracing"):
 * only an X-Ray header (`Root=…;Parent=…;Sampled=…`, at most 512 characters) is passed on.
 */
const HEADER = 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1';

describe('the trace header passed on', () => {
  it.each<[string, string | undefined, string | undefined]>([
    ['an X-Ray header', HEADER, HEADER],
    ['a root alone', 'Root=1-5759e988-bd862e3fe1be46a994272793', 'Root=1-5759e988-bd862e3fe1be46a994272793'],
    ['a field with an empty value', 'Root=1-abc;Sampled=', 'Root=1-abc;Sampled='],
    ['no header', undefined, undefined],
    ['an empty header', '', undefined],
    ['free text', 'hello world', undefined],
    ['an injected field separator', `${HEADER}\nX-Evil: 1`, undefined],
    ['a value with a space', 'Root=1 2', undefined],
    ['a header of 512 characters', `Root=${'a'.repeat(507)}`, `Root=${'a'.repeat(507)}`],
    ['a header over 512 characters', `Root=${'a'.repeat(508)}`, undefined],
  ])('%s', (_, header, passed) => {
    expect(validTraceHeader(header)).toBe(passed);
  });
});

describe('the trace of the message being handled', () => {
  it('is carried on SQS sends and EventBridge entries inside the handling, and not outside it', async () => {
    expect(currentTraceHeader()).toBeUndefined();
    expect(traceSystemAttributes()).toEqual({});
    expect(traceEventField()).toEqual({});

    const inside = await withTraceHeader(HEADER, async () => {
      await Promise.resolve();
      return { header: currentTraceHeader(), sqs: traceSystemAttributes(), events: traceEventField() };
    });

    expect(inside).toEqual({
      header: HEADER,
      sqs: { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: HEADER } } },
      events: { TraceHeader: HEADER },
    });
    expect(currentTraceHeader()).toBeUndefined();
  });

  it('passes nothing on for a malformed header', () => {
    withTraceHeader('not a trace', () => {
      expect(currentTraceHeader()).toBeUndefined();
      expect(traceSystemAttributes()).toEqual({});
    });
  });

  it('keeps each record its own trace when handled concurrently', async () => {
    const other = 'Root=1-aaaaaaaa-bbbbbbbbbbbbbbbbbbbbbbbb';
    const seen = await Promise.all(
      [HEADER, other].map((h) =>
        withTraceHeader(h, async () => {
          await new Promise((resolve) => setTimeout(resolve, h === HEADER ? 5 : 0));
          return currentTraceHeader();
        }),
      ),
    );
    expect(seen).toEqual([HEADER, other]);
  });
});
