/**
 * `@fanin/client`: what producers and responders use to talk to fanin (the local runtime or a
 * deployed stack). The sources live in the fanin repository's `shared/client/`.
 *
 * @example
 * import { faninClientOf, resolveTarget, stateFilePath } from '@fanin/client';
 * const target = await resolveTarget({ stateFile: stateFilePath(process.cwd()) }); // or { stack: 'fanin' }
 * const client = faninClientOf(target);
 * await client.sendRequest('loan-broker', { payload: { amount: 250000 } });
 */

export { S3ClaimCheck } from '../../../shared/adapters/s3-claim-check.ts';
export { type AwsClients, type Connection, createClients } from '../../../shared/aws/clients.ts';
export {
  connectionOf,
  faninClientOf,
  type ResolveOptions,
  resolveTarget,
  type Target,
  TargetNotFoundError,
  targetFromState,
} from '../../../shared/client/connect.ts';
export {
  FaninClient,
  type FaninClientOptions,
  type ReceivedSubRequest,
} from '../../../shared/client/fanin-client.ts';
export {
  DEFAULT_STATE_FILE,
  type RuntimeState,
  readState,
  stateFilePath,
} from '../../../shared/client/runtime-state.ts';
export type { DefinitionInput } from '../../../shared/engine/definition.ts';
export type { PartitionedDestination } from '../../../shared/partitions/destination.ts';
