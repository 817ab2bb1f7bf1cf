import { BadMessageError } from '../errors.ts';

/**
 * The bounds of every field fanin takes from a message, stated once. Each keeps what fanin
 * stores under DynamoDB's limits — an item at most 400 KB, a partition key at most 2,048 bytes,
 * a sort key at most 1,024 bytes — with every key built as a short prefix plus ids (state-keys.ts),
 * and keeps every output fanin emits about such a message (its reason quotes the field) within
 * SQS's 256 KiB. A field beyond its bound is bad input: the message goes to the error output with
 * the reason, never retried into a dead-letter queue. docs/wire-contract.md lists them in one table.
 *
 * Lengths are in UTF-16 code units (JavaScript's `length`) unless they say bytes: one unit is at
 * most 3 UTF-8 bytes, so 256 units are at most 768 bytes.
 */

/** A request's `requestId` (or `fanin-request-id`): kept in the header and on every sub-request. */
export const MAX_REQUEST_ID_LENGTH = 256;
/** A request-chosen `aggregateId`: 1–200 of `A-Z a-z 0-9 _ - . /`, starting alphanumeric. */
export const MAX_REQUEST_AGGREGATE_ID_LENGTH = 200;
/** A definition's name (the definition schema's own rule; a longer name names no definition). */
export const MAX_DEFINITION_NAME_LENGTH = 64;
/** Sub-requests (and so `expected` replies) one request may fan out to. */
export const MAX_FAN_OUT = 10_000;
/** A label of a sub-request (a splitter item's `labelPath`); `missing` lists carry it. */
export const MAX_LABEL_LENGTH = 256;
/**
 * A correlation key or reply id read from a message (a reply's `fanin-reply-id`, a definition's
 * `correlation` or `replyId`): the sort key `R#~<id>` stays far under 1,024 bytes.
 */
export const MAX_KEY_LENGTH = 256;
/** An aggregate id a reply or a command names, in UTF-8 bytes: `A#<id>#c<shard>` stays under 2,048. */
export const MAX_AGGREGATE_ID_BYTES = 1024;
/** A failed reply's `fanin-failure` text, after folding whitespace (longer text is cut, not refused). */
export const MAX_FAILURE_TEXT_LENGTH = 1024;
/** A body kept inline in a state item; a larger one goes to the payload bucket (or is refused without one). */
export const MAX_INLINE_BODY_BYTES = 350_000;
/**
 * The most of a message value an error reason quotes: a reason naming a 200 KB attribute would
 * otherwise make the error output itself too large to send.
 */
export const MAX_REASON_LENGTH = 2048;

/**
 * How deep a message body's JSON may nest (arrays and objects). `JSON.stringify`, path reads
 * and JSONata recurse: a 256 KiB body of `[` nests 100,000 deep and overflows the stack, a
 * failure no retry fixes.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * How deep JSON text nests, read from the text (before parsing: the parsed value is what would
 * overflow), stopping as soon as it passes `limit`.
 */
export function jsonDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i += 1; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth += 1;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (c === 0x5d || c === 0x7d) depth -= 1;
  }
  return deepest;
}

/** Why `value` is not a bounded identifier: empty, too long, or holding control characters. */
export function identifierProblem(value: string, max: number): string | undefined {
  if (value.length === 0) return 'is empty';
  if (value.length > max) return `is ${value.length} characters, more than the ${max} allowed`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) return 'contains control characters';
  return undefined;
}

/** A value quoted in a reason, cut to a readable length (the error output keeps the message whole). */
export function quoted(value: string, max = 80): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
}

/**
 * A character outside what SQS accepts in a message (#x9, #xA, #xD, #x20 to #xD7FF, #xE000 to
 * #xFFFD, #x10000 to #x10FFFF); with the `u` flag a lone surrogate is one such code point.
 */
const NOT_CARRIED = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** Refuses an id SQS could not carry in the messages that name it (timers, outputs). */
export function assertCarried(what: string, id: string): void {
  const bad = NOT_CARRIED.exec(id)?.[0];
  if (bad !== undefined)
    throw new BadMessageError(
      `${what} holds U+${(bad.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, which SQS cannot carry (a control character, a lone surrogate, U+FFFE or U+FFFF)`,
    );
}
