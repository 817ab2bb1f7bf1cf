/** The aggregation engine: correlation, completion and aggregation as plain TypeScript. No AWS, no Lambda. */

export {
  CorrelationError,
  ExpressionError,
  FaninError,
  IllegalTransitionError,
  InvalidDefinitionError,
} from '../errors.ts';
export * from './aggregation.ts';
export * from './completion.ts';
export * from './constants.ts';
export * from './correlation.ts';
export * from './definition.ts';
export * from './event-pattern.ts';
export * from './expression.ts';
export * from './failures.ts';
export * from './lifecycle.ts';
export * from './path.ts';
export * from './predicate.ts';
export * from './request-parameters.ts';
export * from './rules.ts';
