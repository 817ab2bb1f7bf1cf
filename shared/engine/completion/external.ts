import type { StrategyRule, StrategySpec } from './rule.ts';

/** `external`: no reply completes it, only an external event (or a `complete` command); at a deadline it is timed out. */
export const externalRule: StrategyRule<StrategySpec<'external'>> = {
  onReply: () => undefined,
  atDeadline: 'times-out',
  reads: () => 'never',
};
