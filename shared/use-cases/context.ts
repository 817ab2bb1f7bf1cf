import type { Definition } from '../engine/definition.ts';
import type {
  Clock,
  OutputPublisher,
  RawMessage,
  RequestSender,
  StateStore,
  TimerScheduler,
} from '../ports.ts';
import { QueueRole } from '../topology/topology.ts';

/** Everything a use case needs, injected: the ports, the definitions and the clock. */
export interface FaninContext {
  readonly store: StateStore;
  readonly outputs: OutputPublisher;
  readonly timers: TimerScheduler;
  readonly sender: RequestSender;
  readonly definitions: ReadonlyMap<string, Definition>;
  /** Reply partition queue URLs; sub-requests name one of them as their reply-to. */
  readonly replyQueueUrls: readonly string[];
  readonly clock: Clock;
  /** How long a completing invocation owns an aggregate before the sweeper may resume it. @default 120 s */
  readonly completionLeaseMs: number;
  /** Largest reply body kept in the state store (a DynamoDB item is at most 400 KB). */
  readonly maxReplyBytes: number;
}

/** Defaults of the tunables in {@link FaninContext}. */
export const CONTEXT_DEFAULTS = { completionLeaseMs: 120_000, maxReplyBytes: 350_000 } as const;

/** Where a message that could not be processed came from. */
export type ErrorSource = 'ingress' | 'reply' | 'control' | 'timer';

/**
 * Routes a message that can never succeed to the error output with its reason and the original
 * message, so it is neither lost nor left to block its queue. The id is derived from the source
 * message id, so a redelivered bad message yields the same error id.
 */
export async function routeError(
  ctx: FaninContext,
  source: ErrorSource,
  message: RawMessage,
  reason: string,
): Promise<void> {
  await ctx.outputs.publish(QueueRole.ERROR, {
    id: `error/${source}/${message.messageId}`,
    type: 'fanin.error',
    source,
    reason,
    at: ctx.clock(),
    message: { messageId: message.messageId, body: message.body, attributes: message.attributes },
  });
}

/** A problem with the message itself: retrying cannot fix it, so it goes to the error output. */
export class BadMessageError extends Error {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BadMessageError';
  }
}

/** Parses a message body as JSON, or throws {@link BadMessageError}. */
export function parseJsonBody(message: RawMessage): unknown {
  try {
    return JSON.parse(message.body);
  } catch (error) {
    throw new BadMessageError(`body is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}
