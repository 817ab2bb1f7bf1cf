import { describe, expect, it } from 'vitest';
import { decodeMembers, encodeMembers, isRecipientIndex } from '../../../../shared/engine/members.ts';

describe('member sets', () => {
  it.each([
    ['a splitter fan-out of ten', Array.from({ length: 10 }, (_, i) => String(i)), '[[0,9]]'],
    ['a gap in the indexes', ['0', '1', '3'], '[[0,1],[3,3]]'],
    ['named replies, sorted', ['bank-b', 'bank-a'], '["bank-a","bank-b"]'],
    // "01" is not the index 1: an id that only looks numeric is kept as it is.
    ['an id with a leading zero', ['1', '01'], '[[1,1],"01"]'],
    ['nothing', [], '[]'],
  ])('%s is encoded compactly and decodes to the same set', (_case, ids, encoded) => {
    // Act
    const text = encodeMembers(ids);

    // Assess
    expect(text).toBe(encoded);
    expect(new Set(decodeMembers(text))).toEqual(new Set(ids));
  });

  it('a fan-out of 10,000 is a few bytes, so sealing costs the same at any fan-out', () => {
    // Prepare
    const ids = Array.from({ length: 10_000 }, (_, i) => String(9_999 - i));

    // Act
    const text = encodeMembers(ids);

    // Assess
    expect(text).toBe('[[0,9999]]');
    expect(decodeMembers(text)).toHaveLength(10_000);
  });

  it('duplicates count once', () => {
    expect(decodeMembers(encodeMembers(['2', '2', 'x', 'x']))).toEqual(['2', 'x']);
  });
});

describe('recipient indexes', () => {
  it.each(['0', '1', '2'])('%s is a recipient of three', (id) => {
    expect(isRecipientIndex(id, 3)).toBe(true);
  });

  it.each(['3', '01', '00', '-1', '-0', '1e0', '1.0', ' 1', '+1', 'abc', ''])(
    '"%s" is no recipient of three: not an index as the fan-out writes it',
    (id) => {
      expect(isRecipientIndex(id, 3)).toBe(false);
    },
  );
});
