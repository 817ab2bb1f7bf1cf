import { describe, expect, it } from 'vitest';
import {
  aggregateIdOf,
  aggregateKey,
  blockKey,
  counterKey,
  DUE_INDEX,
  heldKey,
  heldReplyIdOf,
  KEY_ESCAPE,
  KEY_SEPARATOR,
  keyText,
  parametersKey,
  replyKey,
  SortKey,
  shardKey,
} from '../../../../shared/adapters/state-keys.ts';
import { packKey } from '../../../../shared/adapters/state-packs.ts';
import { describeTopology } from '../../../../shared/topology/topology.ts';

/**
 * The state table's keys are made from ids that messages choose. Two different items must never
 * share a key: these tests enumerate every id up to a length over an alphabet of the characters a
 * key layout could trip on (`#`, the layout's own suffix letters and digits, its separator and
 * escape, surrogates, an escape's payload), and check that no two (kind, id, number) give the
 * same key — compared as the UTF-8 bytes DynamoDB stores, not as JavaScript strings.
 */

/** Every string of length 0 … max over the alphabet. */
function strings(alphabet: readonly string[], max: number): string[] {
  const all = [''];
  let layer = [''];
  for (let length = 1; length <= max; length += 1) {
    layer = layer.flatMap((s) => alphabet.map((c) => s + c));
    all.push(...layer);
  }
  return all;
}

const ADVERSARIAL = [
  '#',
  'A',
  'c',
  's',
  '1',
  '0',
  '~',
  KEY_SEPARATOR,
  KEY_ESCAPE,
  '\ud800', // a lone high surrogate …
  '\udc00', // … and low one (as a pair, one astral character)
  '\ue000', // what a lone U+D800 is escaped to
];

/** The bytes DynamoDB keeps for a key: what two keys are compared by. */
const bytes = (key: string) => Buffer.from(key, 'utf8').toString('hex');

/** Asserts that no two labelled keys are the same bytes; returns how many were compared. */
function expectInjective(keys: Iterable<readonly [label: string, key: string]>): number {
  const seen = new Map<string, string>();
  let count = 0;
  for (const [label, key] of keys) {
    const other = seen.get(bytes(key));
    if (other !== undefined && other !== label)
      expect.fail(
        `${JSON.stringify(label)} and ${JSON.stringify(other)} share the key ${JSON.stringify(key)}`,
      );
    seen.set(bytes(key), label);
    count += 1;
  }
  return count;
}

describe('state table keys', () => {
  const ids = strings(ADVERSARIAL, 3);

  it('no partition key of one aggregate (its own, a write shard, a counter) is a key of another aggregate', () => {
    function* partitionKeys() {
      for (const id of ids) {
        yield [`aggregate ${id}`, aggregateKey(id)] as const;
        for (let shard = 1; shard <= 16; shard += 1)
          yield [`shard ${shard} of ${id}`, shardKey(id, shard)] as const;
        for (let shard = 0; shard <= 16; shard += 1)
          yield [`counter ${shard} of ${id}`, counterKey(id, shard)] as const;
        yield [`parameters of ${id}`, parametersKey(id)] as const;
      }
    }

    // Mutant killed: "a shard key is the aggregate key and #<shard>" (`A#x#1` is aggregate x#1's).
    expect(expectInjective(partitionKeys())).toBe(ids.length * 35);
  });

  it('every key is well-formed UTF-8: two different lone surrogates never reach DynamoDB as one character', () => {
    for (const id of ids) {
      for (const key of [aggregateKey(id), shardKey(id, 3), counterKey(id, 0), replyKey(id), heldKey(id)])
        expect(Buffer.from(key, 'utf8').toString('utf8')).toBe(key);
    }
  });

  it('an aggregate key gives its aggregate id back, and a held key its reply id', () => {
    for (const id of ids) {
      expect(aggregateIdOf(aggregateKey(id))).toBe(id);
      expect(heldReplyIdOf(heldKey(id))).toBe(id);
    }
  });

  it('no two sort keys within an aggregate (replies, packs, held replies, blocks, fixed items) are equal', () => {
    const replyIds = [...ids, '7', '0000000007', '42', '4294967295', '12345678901', 'R#1', 'Q#1'];
    function* sortKeys() {
      for (const id of replyIds) {
        yield [`reply ${id}`, replyKey(id)] as const;
        yield [`pack from ${id}`, packKey([id])] as const;
        yield [`held ${id}`, heldKey(id)] as const;
      }
      for (let block = 0; block < 64; block += 1) yield [`block ${block}`, blockKey(block)] as const;
      for (const fixed of ['REQUEST', 'HEADER', 'COUNTER', 'PARAMETERS'] as const)
        yield [fixed, SortKey[fixed]] as const;
    }

    expect(expectInjective(sortKeys())).toBe(replyIds.length * 3 + 64 + 4);
  });

  it('ids an SQS attribute can carry keep the key text they had before the encoding', () => {
    // Upgrades: every aggregate opened by an earlier version keeps its key (docs/data-plane.md).
    for (const id of ['order-1', 'auction:lot#1', 'a#c0', 'ünï😀', '~7', '']) expect(keyText(id)).toBe(id);
    expect(aggregateKey('auction:lot#1')).toBe('A#auction:lot#1');
  });
});

describe('the due index', () => {
  it('is the index the topology declares keyed by dueShard and dueAt, which the stack and the local runtime create', () => {
    // Arrange
    const { table } = describeTopology({ definitions: [] });

    // Act
    const declared = table.indexes.filter(
      (i) => i.partitionKey.name === 'dueShard' && i.sortKey.name === 'dueAt',
    );

    // Assess
    expect(declared.map((i) => i.name)).toEqual([DUE_INDEX]);
  });
});
