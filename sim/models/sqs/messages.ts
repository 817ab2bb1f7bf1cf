/**
 * What SQS checks in a message before it accepts it, and the digests it returns: message
 * attributes (at most 10; names of 1-256 characters of A-Z a-z 0-9 _ - . without `AWS.` or
 * `Amazon.` prefixes, leading or trailing dots or `..`; types String, Number or Binary with an
 * optional custom suffix; non-empty values; numbers SQS can hold), the body's characters, the
 * size SQS counts (body plus attribute names, types and values), and the MD5 digests of the body
 * and of the attributes as SQS computes them.
 */
import { createHash } from 'node:crypto';
import { unmodelled } from '../errors.ts';

/** A message attribute as the SDK carries it. */
export interface AttributeValue {
  readonly DataType?: string;
  readonly StringValue?: string;
  readonly BinaryValue?: Uint8Array;
}

/** SQS's most message attributes on one message. */
export const MAX_MESSAGE_ATTRIBUTES = 10;

/** An SQS client error of `code` (the SDK names unmodelled errors by their code). */
export function sqsError(code: string, message: string): Error {
  return unmodelled('sqs', code, message, { Code: code });
}

/** The size SQS counts for a message: the body and every attribute's name, type and value. */
export function messageSize(body: string, attributes: Readonly<Record<string, AttributeValue>> = {}): number {
  let size = Buffer.byteLength(body);
  for (const [name, value] of Object.entries(attributes)) {
    size += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
    size +=
      value.StringValue !== undefined
        ? Buffer.byteLength(value.StringValue)
        : (value.BinaryValue?.length ?? 0);
  }
  return size;
}

// The characters SQS allows in a body and in string attribute values (XML's).
const INVALID_CHARACTER = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

/** Refuses a body SQS refuses: empty, or with characters outside the allowed set. */
export function checkBody(body: unknown): string {
  if (typeof body !== 'string' || body.length === 0) {
    throw sqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
  }
  const bad = INVALID_CHARACTER.exec(body);
  if (bad) {
    throw sqsError(
      'InvalidMessageContents',
      `Invalid binary character '#x${(bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase()}' was found in the message body, the set of allowed characters is available at http://www.w3.org/TR/REC-xml/#charsets`,
    );
  }
  return body;
}

const NAME = /^[A-Za-z0-9_.-]{1,256}$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Refuses message attributes SQS refuses. */
export function checkAttributes(attributes: Readonly<Record<string, AttributeValue>> | undefined): void {
  const entries = Object.entries(attributes ?? {});
  if (entries.length > MAX_MESSAGE_ATTRIBUTES) {
    throw sqsError(
      'InvalidParameterValue',
      `Number of message attributes [${entries.length}] exceeds the allowed maximum [${MAX_MESSAGE_ATTRIBUTES}].`,
    );
  }
  for (const [name, value] of entries) {
    if (!NAME.test(name) || name.startsWith('.') || name.endsWith('.') || name.includes('..')) {
      throw sqsError('InvalidParameterValue', `Message (user) attribute name '${name}' is invalid.`);
    }
    if (/^(aws\.|amazon\.)/i.test(name)) {
      throw sqsError(
        'InvalidParameterValue',
        `Message (user) attribute name '${name}' is reserved for use by SQS.`,
      );
    }
    const type = value.DataType ?? '';
    const base = type.split('.')[0] ?? '';
    if (!type || !['String', 'Number', 'Binary'].includes(base) || type.length > 256) {
      throw sqsError(
        'InvalidParameterValue',
        `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`,
      );
    }
    const present =
      base === 'Binary' ? (value.BinaryValue?.length ?? 0) > 0 : (value.StringValue ?? '').length > 0;
    if (!present) {
      throw sqsError(
        'InvalidParameterValue',
        `Message (user) attribute '${name}' must contain a non-empty value of type '${base}'.`,
      );
    }
    if (base === 'Number' && !NUMBER.test((value.StringValue ?? '').trim())) {
      throw sqsError(
        'InvalidParameterValue',
        `Can't convert message (user) attribute '${name}' to a number.`,
      );
    }
    if (base === 'String' && INVALID_CHARACTER.test(value.StringValue ?? '')) {
      throw sqsError(
        'InvalidParameterValue',
        `Message (user) attribute '${name}' contains invalid characters.`,
      );
    }
  }
}

/** MD5 of a string, hex: SQS's `MD5OfMessageBody`. */
export function md5(text: string): string {
  return createHash('md5').update(text, 'utf8').digest('hex');
}

/** SQS's `MD5OfMessageAttributes`: names sorted, each name, type and value length-prefixed. */
export function md5OfAttributes(attributes: Readonly<Record<string, AttributeValue>>): string {
  const hash = createHash('md5');
  const field = (bytes: Uint8Array) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length);
    hash.update(bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const value = attributes[name] as AttributeValue;
    field(Buffer.from(name, 'utf8'));
    field(Buffer.from(value.DataType ?? '', 'utf8'));
    if (value.BinaryValue !== undefined && value.StringValue === undefined) {
      hash.update(Buffer.from([2]));
      field(value.BinaryValue);
    } else {
      hash.update(Buffer.from([1]));
      field(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return hash.digest('hex');
}

/** Whether a receive's `MessageAttributeNames` asks for the attribute `name` (`All`, `.*`, `prefix.*`). */
export function wantsAttribute(requested: readonly string[] | undefined, name: string): boolean {
  return (requested ?? []).some(
    (r) => r === 'All' || r === '.*' || r === name || (r.endsWith('.*') && name.startsWith(r.slice(0, -1))),
  );
}

/** A version 4 UUID drawn from `random` (message ids, deterministic per seed). */
export function uuid(random: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
