import { type Definition, stateLifeSeconds } from '../engine/definition.ts';
import type { FaninContext } from './context.ts';

/**
 * The lives of an aggregate (docs/data-plane.md, "Lives"): how long it may stay open, fixed in its
 * header at open (by a fan-out or a self-starting reply), and how long each of its items is kept.
 */

/** Seconds from now after which a reply item may expire: beyond any life its aggregate can have. */
export function replyExpiry(ctx: FaninContext, definition: Definition): number {
  return (
    Math.ceil(ctx.clock() / 1000) + stateLifeSeconds(definition, Math.ceil(ctx.completionLeaseMs / 1000))
  );
}

/** When the sweeper ends an aggregate whatever its strategy: its allowed life, and never before its deadline. */
export function closeByOf(definition: Definition, openedAt: number, deadline: number | undefined): number {
  return Math.max(deadline ?? 0, openedAt + definition.maxOpenSeconds * 1000);
}
