import { createHash } from 'node:crypto';

/**
 * How a producer picks a partition:
 * - `affinity`: a key (e.g. the aggregate id) always maps to the same partition while it is
 *   available — the seed's message affinity;
 * - `balanced`: the available partition with the least work;
 * - `prefer-local`: the producer's own partition while it is available, then balanced.
 */
export type RoutingPolicy =
  | { readonly kind: 'affinity'; readonly key: string }
  | { readonly kind: 'balanced' }
  | { readonly kind: 'prefer-local'; readonly local: number };

/** What routing knows of one partition. */
export interface Candidate {
  readonly index: number;
  /** Messages in the partition (visible + in flight); unknown when its queue could not be read. */
  readonly depth?: number;
}

/**
 * Rendezvous (highest-random-weight) hashing: every partition gets a score for the key and the
 * highest available one wins. A key keeps its partition while that partition is available; when
 * it is not, only that partition's keys move, each to its own second choice.
 */
export function affinityOrder(key: string, indexes: readonly number[]): number[] {
  const score = (index: number) =>
    createHash('sha256').update(`${index}\u0000${key}`).digest().readUInt32BE(0);
  return [...indexes].sort((a, b) => score(b) - score(a) || a - b);
}

/**
 * Picks a partition among the available candidates, or `undefined` when there is none.
 * `rotation` breaks ties between equally loaded partitions (a counter kept by the caller).
 */
export function choosePartition(
  policy: RoutingPolicy,
  available: readonly Candidate[],
  rotation = 0,
): number | undefined {
  if (available.length === 0) return undefined;
  const indexes = available.map((c) => c.index);
  switch (policy.kind) {
    case 'affinity':
      return affinityOrder(policy.key, indexes)[0];
    case 'prefer-local':
      if (indexes.includes(policy.local)) return policy.local;
      return leastLoaded(available, rotation);
    case 'balanced':
      return leastLoaded(available, rotation);
  }
}

function leastLoaded(available: readonly Candidate[], rotation: number): number | undefined {
  const lowest = Math.min(...available.map((c) => c.depth ?? 0));
  const ties = available.filter((c) => (c.depth ?? 0) === lowest);
  return ties[rotation % ties.length]?.index;
}
