import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The X-Ray trace header of the message being handled, carried on to what handling it sends.
 *
 * SQS carries a trace in the `AWSTraceHeader` message system attribute. The Lambda entry points
 * run each record (a reply batch: each batch of one trace) inside {@link withTraceHeader}; the
 * SQS adapters set {@link traceSystemAttributes} on every message they send meanwhile, so the
 * producer's trace follows the request to its sub-requests and on to the result. The use cases
 * know nothing of it.
 */
const current = new AsyncLocalStorage<string | undefined>();

/** The longest trace header passed on (an X-Ray header is about 100 characters; SQS allows more). */
const MAX_TRACE_HEADER_LENGTH = 512;
/** What an X-Ray trace header looks like: `Root=…;Parent=…;Sampled=…` fields, nothing else. */
const TRACE_HEADER = /^[A-Za-z]+=[A-Za-z0-9-]+(;[A-Za-z]+=[A-Za-z0-9-]*)*$/;

/** Runs `fn` with `header` as the trace to pass on (none when the header is absent or malformed). */
export function withTraceHeader<T>(header: string | undefined, fn: () => T): T {
  return current.run(validTraceHeader(header), fn);
}

/** The trace header to pass on, if any. */
export function currentTraceHeader(): string | undefined {
  return current.getStore();
}

/**
 * A trace header from a message, or undefined: it is passed on as it came, so only the X-Ray
 * format and a bounded length are accepted (anything else is dropped, never an error).
 */
export function validTraceHeader(header: string | undefined): string | undefined {
  if (!header || header.length > MAX_TRACE_HEADER_LENGTH || !TRACE_HEADER.test(header)) return undefined;
  return header;
}

/** `MessageSystemAttributes` for SQS SendMessage(Batch) carrying {@link currentTraceHeader}, or nothing. */
export function traceSystemAttributes(): {
  MessageSystemAttributes?: { AWSTraceHeader: { DataType: 'String'; StringValue: string } };
} {
  const header = currentTraceHeader();
  return header
    ? { MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: header } } }
    : {};
}

/** The `TraceHeader` of an EventBridge PutEvents entry carrying {@link currentTraceHeader}, or nothing. */
export function traceEventField(): { TraceHeader?: string } {
  const header = currentTraceHeader();
  return header ? { TraceHeader: header } : {};
}
