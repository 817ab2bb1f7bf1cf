import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkAttributes,
  checkBody,
  md5,
  md5OfAttributes,
  messageSize,
  wantsAttribute,
} from '../../../../../sim/models/sqs/messages.ts';

/**
 * SQS's message rules as its developer guide documents them: the size counts the body and each
 * attribute's name, type and value; at most 10 attributes, names without `aws.`/`amazon.`
 * prefixes or consecutive dots, types String, Number or Binary (with a custom suffix), values
 * non-empty; bodies of the XML character set; and the MD5 digests (the body's, and the
 * attributes' by the documented encoding). fauxqs checks none of the attribute rules, which is
 * why this test pins them.
 */

describe('message size', () => {
  it('counts the body in UTF-8 bytes, plus each attribute name, type and value', () => {
    expect(messageSize('é')).toBe(2);
    expect(
      messageSize('body', {
        n: { DataType: 'Number', StringValue: '12' },
        b: { DataType: 'Binary', BinaryValue: new Uint8Array(3) },
      }),
    ).toBe(4 + (1 + 6 + 2) + (1 + 6 + 3));
  });
});

describe('message attributes', () => {
  const s = (StringValue: string) => ({ DataType: 'String', StringValue });

  it('takes ten attributes and refuses eleven', () => {
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`a${i}`, s('v')]));
    expect(() => checkAttributes(ten)).not.toThrow();
    expect(() => checkAttributes({ ...ten, extra: s('v') })).toThrow(
      'Number of message attributes [11] exceeds the allowed maximum [10].',
    );
  });

  it('refuses reserved prefixes, dots at either end or doubled, and an unknown type', () => {
    for (const name of ['AWS.x', 'amazon.y', '.a', 'a.', 'a..b'])
      expect(() => checkAttributes({ [name]: s('v') }), name).toThrow(/attribute name/);
    expect(() => checkAttributes({ a: { DataType: 'Text', StringValue: 'v' } })).toThrow(
      /supported type prefixes: Binary, Number, String/,
    );
    expect(() => checkAttributes({ a: { DataType: 'String.custom', StringValue: 'v' } })).not.toThrow();
  });

  it('refuses an empty value, a Number that is not a number, and characters outside XML', () => {
    expect(() => checkAttributes({ a: s('') })).toThrow(/must contain a non-empty value of type 'String'/);
    expect(() => checkAttributes({ a: { DataType: 'Number', StringValue: 'ten' } })).toThrow(/to a number/);
    expect(() => checkAttributes({ a: s('\u0001') })).toThrow(/invalid characters/);
    expect(() => checkBody('')).toThrow(/MessageBody/);
    expect(() => checkBody('ok\u0000')).toThrow(expect.objectContaining({ name: 'InvalidMessageContents' }));
    expect(checkBody('tab\tnewline\n😀')).toBe('tab\tnewline\n😀');
  });

  it('matches All, .*, a name and a prefix.*', () => {
    expect(wantsAttribute(['All'], 'x')).toBe(true);
    expect(wantsAttribute(['.*'], 'x')).toBe(true);
    expect(wantsAttribute(['trace.*'], 'trace.id')).toBe(true);
    expect(wantsAttribute(['trace.*'], 'other')).toBe(false);
    expect(wantsAttribute(undefined, 'x')).toBe(false);
  });
});

describe('digests', () => {
  it('gives the MD5 of the body in hex', () => {
    expect(md5('hello')).toBe('5d41402abc4b2a76b9719d911017c592');
  });

  it('digests attributes by the documented encoding: names sorted, each field length-prefixed, a transport byte', () => {
    // Written from SQS's "Calculating the MD5 message digest for message attributes".
    const hash = createHash('md5');
    const field = (bytes: Buffer) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      hash.update(Buffer.concat([length, bytes]));
    };
    field(Buffer.from('a'));
    field(Buffer.from('Binary'));
    hash.update(Buffer.from([2]));
    field(Buffer.from([9, 8]));
    field(Buffer.from('z'));
    field(Buffer.from('String'));
    hash.update(Buffer.from([1]));
    field(Buffer.from('ü'));
    const expected = hash.digest('hex');
    expect(
      md5OfAttributes({
        z: { DataType: 'String', StringValue: 'ü' },
        a: { DataType: 'Binary', BinaryValue: new Uint8Array([9, 8]) },
      }),
    ).toBe(expected);
  });
});
