import type { AggregationContext, ReplyRecord } from '../../../../shared/engine/aggregation.ts';
import type { ReplyTally } from '../../../../shared/engine/completion/tally.ts';
import type { InboundMessage } from '../../../../shared/engine/correlation.ts';
import {
  type Definition,
  type DefinitionInput,
  type EffectiveParameters,
  parseDefinition,
} from '../../../../shared/engine/definition.ts';

/** A valid definition ('all', collect, every default applied) with `overrides` laid over it. */
export function aDefinition(overrides: Partial<DefinitionInput> = {}): Definition {
  return parseDefinition({ name: 'orders', completion: { strategy: 'all' }, ...overrides });
}

/** The Aggregator pattern's loan broker: wait for the banks' quotes, or stop early on a rate at or below 3. */
export function anOverrideDefinition(
  completion: Partial<Extract<DefinitionInput['completion'], { strategy: 'override' }>> = {},
): Definition {
  return aDefinition({
    name: 'loan-broker',
    timeoutSeconds: 60,
    completion: {
      strategy: 'override',
      score: { source: 'path', path: '$.rate' },
      threshold: 3,
      direction: 'below',
      ...completion,
    },
  });
}

/** The Aggregator pattern's auction: a self-starting aggregate keyed by the auction id. */
export function anAuctionDefinition(overrides: Partial<DefinitionInput> = {}): Definition {
  return aDefinition({
    name: 'auction',
    mode: 'self-starting',
    correlation: { source: 'path', path: '$.auctionId' },
    completion: { strategy: 'count', count: 3 },
    ...overrides,
  });
}

/** One recorded reply. */
export function aReply(replyId: string, body: unknown, receivedAt = 0): ReplyRecord {
  return { replyId, body, receivedAt };
}

/** An inbound message; attributes default to none. */
export function aMessage(
  body: unknown,
  attributes: Record<string, string> = {},
  messageId?: string,
): InboundMessage {
  return messageId === undefined ? { body, attributes } : { body, attributes, messageId };
}

/** What the aggregation algorithms know about the aggregate. */
export function aContext(overrides: Partial<AggregationContext> = {}): AggregationContext {
  return { aggregateId: 'agg-1', definition: 'orders', params: {}, at: 1_700_000_000_000, ...overrides };
}

/** The tally of an aggregate's replies that completion looks at. */
export function aState(received: number, expected?: number, params: EffectiveParameters = {}): ReplyTally {
  return expected === undefined ? { received, params } : { received, expected, params };
}

/** A small seeded pseudo-random generator (mulberry32): the same seed gives the same sequence. */
export { mulberry32 as seededRandom } from '../../../../bench/workload/random.ts';

/** A copy of `items` in an order drawn from `random` (Fisher-Yates). */
export function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    const a = copy[i] as T;
    copy[i] = copy[j] as T;
    copy[j] = a;
  }
  return copy;
}

/** Every ordering of `items`. */
export function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, index) =>
    permutations([...items.slice(0, index), ...items.slice(index + 1)]).map((rest) => [item, ...rest]),
  );
}

/** The error `action` throws; fails the test when it throws nothing. */
export function thrownBy(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the action to throw, but it returned');
}

/** The error `promise` rejects with; fails the test when it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
