/**
 * What a run sent and what fanin published, recorded below every deduplication: the inputs the
 * producers, responders and operators sent (with the SQS message ids they got), the sub-requests
 * the responders received, and every output fanin's calls put on an output queue or the bus that
 * took effect (a timed-out call that took effect included). The invariants read only this.
 */

/** An input message a producer, responder or operator sent. */
export interface SentInput {
  readonly kind: 'request' | 'reply' | 'heartbeat' | 'control' | 'event';
  readonly messageId: string;
  readonly at: number;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
  /** The aggregate it is meant for (as the sender knows it). */
  readonly aggregateId?: string;
  readonly replyId?: string;
  readonly failure?: boolean;
  /** The definition it names. */
  readonly definition?: string;
}

/** A sub-request a responder took from a target queue. */
export interface SubRequest {
  readonly aggregateId: string;
  readonly replyId: string;
  readonly definition: string;
  readonly at: number;
}

/** A message fanin sent to a responder queue: a sub-request, or a cancellation notice. */
export interface ResponderSend {
  readonly aggregateId: string;
  readonly replyId: string;
  /** The responder queue's URL. */
  readonly queue: string;
  readonly at: number;
  /** How many publications the ledger held when it was sent (its place among the outputs). */
  readonly afterPublications: number;
  /** The invocation that sent it (the scheduler's task id). */
  readonly taskId: number;
  readonly task: string;
  /** When that invocation started (virtual time): it read the aggregate after this. */
  readonly taskStartedAt: number;
  /** A sub-request's attempt (`fanin-attempt`; 1 when absent, the first send). */
  readonly attempt: number;
  /** The message body and the reply queue it names (`fanin-reply-to`), as sent. */
  readonly body: string;
  readonly replyTo?: string;
}

/** One copy of an output, as published. */
export interface Publication {
  /** The output role, or `events` for the bus. */
  readonly channel: string;
  /** The body (the claim-checked payload when the message was a pointer). */
  readonly text: string;
  readonly at: number;
  readonly task: string;
  /** The invocation that published it (the scheduler's task id). */
  readonly taskId?: number;
}

/**
 * A reply as fanin handled it: received by a reply invocation (the event source's batch or a
 * drain's receive), or recorded in its aggregate (a put that took effect), with the aggregate's
 * header as it stood in the table at that moment: the deadline then in force.
 */
export interface ReplyEvent {
  readonly aggregateId: string;
  readonly replyId: string;
  /** Virtual time. */
  readonly at: number;
  /** The clock of the invocation that handled it (virtual time plus its skew). */
  readonly clock: number;
  /** When SQS accepted the copy delivered (its `SentTimestamp`), on a receipt. */
  readonly sentAt?: number;
  /** The header's deadline at that moment (undefined: no header, or none set). */
  readonly deadline?: number;
  /** The aggregate's header existed at that moment. */
  readonly exists: boolean;
  /** The header was open at that moment. */
  readonly open: boolean;
  readonly failure?: boolean;
  /** The header's expected count and its parameters' count at that moment. */
  readonly expected?: number;
  readonly count?: number;
  /** The header's open time, end of allowed life, and parameters (fixed at open). */
  readonly openedAt?: number;
  readonly closeBy?: number;
  readonly timeoutSeconds?: number;
  readonly inactivityTimeoutSeconds?: number;
}

/** A message left in a dead-letter queue at the end of a run. */
export interface DeadLetter {
  readonly queue: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export class Ledger {
  public readonly inputs: SentInput[] = [];
  public readonly subRequests: SubRequest[] = [];
  /** Every sub-request fanin sent to a responder queue (a send that took effect), below deduplication. */
  public readonly asked: ResponderSend[] = [];
  /** Every cancellation notice fanin sent to a responder queue (a send that took effect), below deduplication. */
  public readonly cancellations: ResponderSend[] = [];
  public readonly publications: Publication[] = [];
  /** Every delivery of a reply to a reply invocation (the first is when fanin received it). */
  public readonly receipts: ReplyEvent[] = [];
  /** Every reply a put recorded in its aggregate (`recorded`, not `duplicate`). */
  public readonly recordings: ReplyEvent[] = [];
  /**
   * Every reply a put stored (its item or its pack took effect), whether or not its caller saw the
   * answer: a put that crashed or timed out after the write is here and not in `recordings`.
   */
  public readonly stored: ReplyEvent[] = [];
  public deadLetters: DeadLetter[] = [];
  /** Aggregates whose due item stayed overdue sweep after sweep (the sweeper could not end them). */
  public readonly stuck = new Set<string>();
  /** Messages still on a queue fanin consumes when the run ended (quiescence means none). */
  public leftover: { readonly queue: string; readonly count: number }[] = [];
  /** Invocations that never ended: they wait on nothing the world can give them. */
  public hung: string[] = [];
  /** Invocations a fault touched that may leave work to redo (the scheduler's `faulted`). */
  public excused: ReadonlySet<number> = new Set();
  /** Puts that replaced a recorded reply or pack (its item was there before the put took effect). */
  public readonly rewrites: { readonly aggregateId: string; readonly key: string; readonly at: number }[] =
    [];
  /** The virtual time the run ended at. */
  public endedAt = 0;

  /** Parsed bodies of every publication, by output id. */
  public byId(): Map<string, Publication[]> {
    const map = new Map<string, Publication[]>();
    for (const p of this.publications) {
      const id = idOf(p.text);
      if (id === undefined) continue;
      const list = map.get(id) ?? [];
      list.push(p);
      map.set(id, list);
    }
    return map;
  }
}

/** The `id` of an output's JSON text, if it has one. */
export function idOf(text: string): string | undefined {
  try {
    const parsed = JSON.parse(text) as { id?: unknown };
    return typeof parsed.id === 'string' ? parsed.id : undefined;
  } catch {
    return undefined;
  }
}

/** A JSON text in one spelling, so two copies of one value compare equal. */
export function canonical(value: unknown): string {
  const parsed = typeof value === 'string' ? safeParse(value) : value;
  return JSON.stringify(sortKeys(parsed));
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** Items by a key, each group in the items' order. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k) ?? [];
    list.push(item);
    map.set(k, list);
  }
  return map;
}
