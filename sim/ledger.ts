/**
 * What a run sent and what fanin published, recorded below every deduplication: the inputs the
 * producers, responders and operators sent (with the SQS message ids they got), the sub-requests
 * the responders received, and every output fanin's calls put on an output queue or the bus that
 * took effect (a timed-out call that took effect included). The invariants read only this.
 */

/** An input message a producer, responder or operator sent. */
export interface SentInput {
  readonly kind: 'request' | 'reply' | 'control' | 'event';
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

/** One copy of an output, as published. */
export interface Publication {
  /** The output role, or `events` for the bus. */
  readonly channel: string;
  /** The body (the claim-checked payload when the message was a pointer). */
  readonly text: string;
  readonly at: number;
  readonly task: string;
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
  public readonly publications: Publication[] = [];
  public deadLetters: DeadLetter[] = [];
  /** Aggregates whose due item stayed overdue sweep after sweep (the sweeper could not end them). */
  public readonly stuck = new Set<string>();
  /** Messages still on a queue fanin consumes when the run ended (quiescence means none). */
  public leftover: { readonly queue: string; readonly count: number }[] = [];
  /** Invocations that never ended: they wait on nothing the world can give them. */
  public hung: string[] = [];
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
