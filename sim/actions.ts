import type { Random } from './random.ts';

/** What a run sends (sim/workload.ts draws the ordinary actions, sim/scenarios.ts the rare ones). */

/** One thing a producer or operator sends, at a virtual time offset from the start. */
export interface Action {
  readonly at: number;
  /** `ingress`, `control`, or a reply partition's index. */
  readonly queue: 'ingress' | 'control' | number;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** Send it by claim check (the body goes to the bucket under `incoming/`). */
  readonly claimCheck?: boolean;
  /** What the ledger needs beyond the body: the aggregate and reply it is meant for. */
  readonly aggregateId?: string;
  readonly replyId?: string;
  readonly kind: 'request' | 'reply' | 'heartbeat' | 'control' | 'event';
}

/** A body every reply carries: a value, scores, and a secret naming its aggregate and reply. */
export function replyBody(random: Random, aggregateId: string, replyId: string): Record<string, unknown> {
  return {
    v: random.between(0, 100),
    rate: random.between(20, 60) / 10,
    score: random.between(0, 100),
    secret: `${aggregateId}|${replyId}`,
  };
}
