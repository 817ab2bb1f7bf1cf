/**
 * `@fanin/testing`: unit tests of fanin aggregation definitions at virtual time, in-process. A
 * simulation runs fanin's production handlers, use cases and adapters over in-memory models of
 * SQS, DynamoDB, S3 and EventBridge (the fanin repository's `sim/models/`), with a clock only the
 * test moves: no emulator, no network, no Java. The sources live in `packages/testing/src/kit.ts`.
 *
 * @example
 * import { simulate } from '@fanin/testing';
 * const run = simulate({ name: 'quotes', completion: { strategy: 'all' }, timeoutSeconds: 30,
 *   fanOut: { type: 'recipient-list', recipients: ['bank-a', 'bank-b'] } });
 * await run.request({ aggregateId: 'q-1', payload: { amount: 100 } });
 * await run.reply('bank-a', { rate: 3.1 });
 * await run.advance('30s');
 * run.result(); // { outcome: 'timed-out', completedBy: 'deadline', missing: [{ replyId: '1', label: 'bank-b' }], ... }
 */

export type { DefinitionInput } from '../../../shared/engine/definition.ts';
export {
  type ConfiguredSimulations,
  DEFAULT_START,
  type Duration,
  durationMs,
  FaninSimulation,
  fromConfig,
  type KitLog,
  type KitRequest,
  type Publication,
  type RawBody,
  type ReplyOptions,
  type ReplyTarget,
  raw,
  type SentSubRequest,
  type SimulateOptions,
  simulate,
} from './kit.ts';
