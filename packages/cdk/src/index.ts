/**
 * `@fanin/cdk`: the fanin CDK construct library. The sources live in the fanin repository's
 * `infra/` and `shared/`; `npm run build` compiles this entry point, bundles the handlers into
 * `dist/handlers/`, and `Fanin` deploys those pre-bundled handlers with the definitions it is given.
 */
export * from '../../../infra/fanin.ts';
export {
  FANIN_RUNTIME,
  FaninFunction,
  type FaninFunctionProps,
  HandlerName,
} from '../../../infra/fanin-function.ts';
export { FaninQueue } from '../../../infra/fanin-queue.ts';
export {
  exampleDefinitions,
  FaninStack,
  type FaninStackProps,
  prefixOfStackName,
} from '../../../infra/fanin-stack.ts';
export {
  FaninObservability,
  type FaninObservabilityProps,
  type WorkingQueue,
} from '../../../infra/observability.ts';
export type { FunctionRole } from '../../../infra/validate-options.ts';
export type { Definition, DefinitionInput } from '../../../shared/engine/definition.ts';
export type { LogLevel } from '../../../shared/observability/metric-names.ts';
export type { PartitioningOptions, TopologyOptions } from '../../../shared/topology/options.ts';
