import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  COMPRESS_FROM_BYTES,
  decodePayload,
  encodePayload,
} from '../../../../shared/adapters/payload-codec.ts';

/** A kilobyte of JSON as a responder writes it: keys repeat, values vary. */
function quote(): string {
  const fees = ['origination', 'appraisal', 'underwriting', 'title', 'recording'].map((type, i) => ({
    type,
    amount: 100 + i * 37.5,
    refundable: i % 2 === 0,
  }));
  return JSON.stringify({
    bank: 'bank-3',
    quoteId: randomBytes(16).toString('hex'),
    rate: 4.8731,
    termMonths: 360,
    fees,
    conditions: [
      'subject to credit approval and a satisfactory appraisal of the property',
      'rate lock valid for 30 days after the date of this quote',
      'no prepayment penalty; escrow required for taxes and insurance',
    ],
    validUntil: '2026-12-30T12:00:00.000Z',
    officer: { name: 'J. Doe', email: 'quotes@bank-3.example' },
  });
}

describe('payload codec', () => {
  it('stores a kilobyte of JSON compressed, in well under its size, and reads it back exactly', () => {
    // Prepare
    const body = quote();

    // Act
    const stored = encodePayload(body);

    // Assess
    expect('payloadBr' in stored).toBe(true);
    const size = 'payloadBr' in stored ? stored.payloadBr.byteLength : Number.POSITIVE_INFINITY;
    expect(size).toBeLessThan(Buffer.byteLength(body) * 0.75);
    expect(decodePayload(stored)).toBe(body);
  });

  it(`keeps a payload under ${COMPRESS_FROM_BYTES} bytes as it is`, () => {
    // Prepare
    const body = JSON.stringify({ v: 1, i: 'r-1' });

    // Act
    const stored = encodePayload(body);

    // Assess
    expect(stored).toEqual({ payload: body });
    expect(decodePayload(stored)).toBe(body);
  });

  it('keeps a payload that does not compress (random bytes as base64) as it is', () => {
    // Prepare
    const body = JSON.stringify({ blob: randomBytes(3_000).toString('base64') });

    // Act
    const stored = encodePayload(body);

    // Assess: base64 compresses a little (6 bits in 8), so only the smaller form is kept
    const size = 'payloadBr' in stored ? stored.payloadBr.byteLength : Buffer.byteLength(body);
    expect(size).toBeLessThanOrEqual(Buffer.byteLength(body));
    expect(decodePayload(stored)).toBe(body);
  });

  it('round-trips text outside ASCII byte for byte', () => {
    // Prepare
    const body = JSON.stringify({ note: 'Zürich — 東京 — 🚀 '.repeat(40) });

    // Act
    const decoded = decodePayload(encodePayload(body));

    // Assess
    expect(decoded).toBe(body);
  });

  it('reads an item written before compression existed (a plain payload attribute)', () => {
    expect(decodePayload({ payload: '{"v":1}', replyId: 'r' })).toBe('{"v":1}');
  });
});
