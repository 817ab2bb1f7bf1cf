import type { Outcome } from '../constants.ts';

/** What happened to the aggregate. */
export type CompletionEvent =
  | { readonly type: 'reply'; readonly score?: number | undefined }
  | { readonly type: 'deadline' }
  /** Every recipient replied, failed or passed its own deadline: no reply that counts can come. */
  | { readonly type: 'settled' }
  | { readonly type: 'external' }
  | { readonly type: 'purge' };

/**
 * What completed an aggregate (Camel's `completedBy`), reported on every terminal output:
 * a rule of its completion (`all-arrived`, `count`, `first`, `threshold`, `predicate`), its
 * `deadline` (or the end of its allowed life), an `external` event or `complete` command, a
 * `purge`, or `failures` beyond the definition's tolerance.
 */
export const CompletedBy = {
  ALL_ARRIVED: 'all-arrived',
  /** Every reply is in or its recipient passed its own deadline (some were settled as timed out). */
  ALL_SETTLED: 'all-settled',
  /** Every recipient replied, failed or passed its own deadline, and the rule was not met: decided as at the deadline. */
  RESPONDERS_SETTLED: 'responders-settled',
  COUNT: 'count',
  FIRST: 'first',
  THRESHOLD: 'threshold',
  PREDICATE: 'predicate',
  DEADLINE: 'deadline',
  EXTERNAL: 'external',
  PURGE: 'purge',
  FAILURES: 'failures',
} as const;
export type CompletedBy = (typeof CompletedBy)[keyof typeof CompletedBy];

/** How an aggregate ends: its outcome, what completed it, and why when it failed. */
export interface Completion {
  readonly outcome: Outcome;
  readonly completedBy: CompletedBy;
  readonly reason?: string;
}

/** Either keep waiting, or close the aggregate with an outcome. */
export type Decision = { readonly complete: false } | ({ readonly complete: true } & Completion);

/** Keep waiting. */
export const WAIT: Decision = { complete: false };

/** Close the aggregate with this outcome, completed by this. */
export function done(outcome: Outcome, completedBy: CompletedBy, reason?: string): Decision {
  return { complete: true, outcome, completedBy, ...(reason !== undefined ? { reason } : {}) };
}
