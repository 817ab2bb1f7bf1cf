/** The aggregation engine: correlation, completion and aggregation as plain TypeScript. No AWS, no Lambda. */

export {
  CorrelationError,
  ExpressionError,
  FaninError,
  IllegalTransitionError,
  InvalidDefinitionError,
} from '../errors.ts';
export * from './aggregation.ts';
export * from './completion/deadline.ts';
export * from './completion/decision.ts';
export * from './completion/failures.ts';
export * from './completion/plan.ts';
export * from './completion/predicate.ts';
export type * from './completion/rule.ts';
export * from './completion/tally.ts';
export * from './constants.ts';
export * from './correlation.ts';
export * from './definition.ts';
export * from './event-pattern.ts';
export * from './expression.ts';
export * from './lifecycle.ts';
export * from './path.ts';
export * from './request-parameters.ts';
