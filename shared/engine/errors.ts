/**
 * The engine's errors now live in `shared/errors.ts`, fanin's one error family. This re-export
 * only keeps the modules still importing this path compiling while they move; import from
 * `shared/errors.ts`.
 */
export {
  CorrelationError,
  ExpressionError,
  FaninError,
  IllegalTransitionError,
  InvalidDefinitionError,
} from '../errors.ts';
