import type { Definition } from '../engine/definition.ts';
import type { RecipientPolicy } from '../engine/recipients.ts';
import type {
  Clock,
  Log,
  Metrics,
  OutputPublisher,
  PayloadStore,
  RawMessage,
  ReplyRouter,
  RequestSender,
  StateStore,
  TimerScheduler,
} from '../ports.ts';
import { SILENT_LOG } from '../ports.ts';

/** Everything a use case needs, injected: the ports, the definitions and the clock. */
export interface FaninContext {
  readonly store: StateStore;
  readonly outputs: OutputPublisher;
  readonly timers: TimerScheduler;
  readonly sender: RequestSender;
  readonly definitions: ReadonlyMap<string, Definition>;
  /** Picks the reply partition each aggregate's sub-requests name as their reply-to. */
  readonly replies: ReplyRouter;
  readonly clock: Clock;
  /**
   * How long a completing invocation owns an aggregate before a resumer may take it over: the
   * function timeout plus a margin (`completionLeaseSeconds` in the topology). @default 120 s
   */
  readonly completionLeaseMs: number;
  /** Largest reply body kept in the state store (a DynamoDB item is at most 400 KB). */
  readonly maxReplyBytes: number;
  /** The claim-check path (large payloads in S3); without it they are refused to the error output. */
  readonly payloads?: PayloadStore;
  /** Where the use cases report what they did and what went wrong (ids and reasons only). */
  readonly log: Log;
  /** Which queues a request may name as recipients (request-time recipient lists are untrusted). */
  readonly recipients: RecipientPolicy;
  /** Puts a request back on the ingress queue, for a large fan-out to go on in another invocation. */
  readonly requeue: (message: RawMessage) => Promise<void>;
  /**
   * The SQS senders (`SenderId`: an IAM user id, or a role id followed by `:` and a session) of
   * fanin's distributor: only their copies' `fanin-origin-sent-at` is taken as a reply's arrival
   * (replies.ts, arrivalOf). None by default: a moved reply arrives when it was moved.
   */
  readonly trustedMovers?: readonly string[];
  /**
   * Sends a command to the control queue: the continuation of a `complete` or `purge` of every
   * aggregate of a definition (or of all), from the cursor where this invocation stopped.
   */
  readonly continueControl: (body: string) => Promise<void>;
  /** `due` index entries a `complete`/`purge` of a definition (or all) reads a page. @default 100 */
  readonly controlPageSize: number;
  /** Pages one control invocation works through before it sends the rest on. @default 10 */
  readonly controlPagesPerInvocation: number;
  /** Counts what happened (aggregates opened and sealed, replies by fate) for CloudWatch; none when absent. */
  readonly metrics?: Metrics;
}

/** Defaults of the tunables in {@link FaninContext}. */
export const CONTEXT_DEFAULTS = {
  completionLeaseMs: 120_000,
  maxReplyBytes: 350_000,
  controlPageSize: 100,
  controlPagesPerInvocation: 10,
  log: SILENT_LOG,
} as const;
