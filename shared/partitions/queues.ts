/**
 * What partitions need from queues: the port through which a partitioned destination and its
 * distributor read depths, send, receive and move messages. SQS implements it
 * (shared/adapters/sqs-partition-queues.ts); the unit tests use one in memory
 * (test/support/memory-partitions.ts). Queues are named by URL. Messages and their attributes
 * have SQS's shape, which the destination's `gather` hands to its callers as it is.
 */

/** A message attribute, in SQS's shape. */
export interface MessageAttribute {
  readonly DataType: string | undefined;
  readonly StringValue?: string | undefined;
  readonly BinaryValue?: Uint8Array | undefined;
}

/** A message to send to a queue. */
export interface OutgoingMessage {
  readonly body: string;
  readonly attributes?: Readonly<Record<string, MessageAttribute>>;
  /** FIFO queues only: its message group. @default 'default' */
  readonly groupId?: string;
  /** FIFO queues only (without content-based deduplication). */
  readonly deduplicationId?: string;
}

/** A message as a receive returns it, in SQS's shape. */
export interface ReceivedMessage {
  readonly MessageId?: string | undefined;
  readonly ReceiptHandle?: string | undefined;
  readonly Body?: string | undefined;
  readonly MessageAttributes?: Readonly<Record<string, MessageAttribute>> | undefined;
}

/** How many messages a queue holds (on SQS its approximate counts, which lag). */
export interface QueueDepth {
  readonly visible: number;
  /** Received and not yet deleted: a consumer holds them. */
  readonly inFlight: number;
  /** Visible + in flight. */
  readonly depth: number;
}

/** What to move, and how: see {@link PartitionQueues.move}. */
export interface MoveRequest {
  readonly from: string;
  readonly to: string;
  /** Most messages to move. */
  readonly max: number;
  /** How long a message being moved stays invisible at its source (it reappears if the move dies). */
  readonly visibilitySeconds: number;
  /**
   * Each receive long-polls this long (1–20 s). A long poll asks every SQS server that may hold
   * a message of the queue; a short poll (0) asks a sample of them and may return nothing while
   * messages wait. @default 1
   */
  readonly waitSeconds?: number;
  /**
   * The source counts as drained only after this many consecutive receives found nothing: one
   * empty receive is never taken as "empty". At least 2. @default 2
   */
  readonly emptyReceives?: number;
  /** Called after each batch with the running total. */
  readonly onBatch?: (moved: number) => void;
  /** Checked before each batch; true stops the move. */
  readonly stop?: () => boolean;
  /** Aborting it cancels the call in progress and stops the move (see {@link MoveResult.aborted}). */
  readonly signal?: AbortSignal;
}

/** A message sent to the target whose delete from the source failed (it is now at both). */
export interface UndeletedMessage {
  /** Its message id at the source. */
  readonly messageId: string;
  /** Its identity, as the copy carries it in `fanin-origin-message-id` (when it has room for it). */
  readonly originMessageId: string;
  readonly code: string;
  readonly message: string;
}

/** What a move did. */
export interface MoveResult {
  /** Messages sent to the target (deleted from the source, or listed in `undeleted`). */
  readonly moved: number;
  /**
   * True when the move ended because `emptyReceives` consecutive long polls found nothing: the
   * only way it concludes that the source is empty.
   */
  readonly drained: boolean;
  /** The target refused a send: the move stopped there (the refused message stays at the source). */
  readonly failure?: { code: string; message: string };
  /**
   * Sent, but deleting them from the source kept failing: each is now at both queues and, after
   * `visibilitySeconds`, will be moved again. Its copies carry one identity, so the reply path
   * counts it once; it is reported so a persistent failure is seen.
   */
  readonly undeleted: readonly UndeletedMessage[];
  /**
   * Messages moved without `fanin-origin-message-id` because they already carry SQS's maximum of
   * 10 message attributes (their copy has a new message id and nothing else to say who it is).
   */
  readonly withoutOrigin: number;
  /** The move stopped because `signal` was aborted (a call in flight may have been cancelled). */
  readonly aborted: boolean;
}

/** The queues of partitioned destinations, as partitions use them. */
export interface PartitionQueues {
  /** How many messages a queue holds. Throws when the queue cannot be read. */
  depth(queueUrl: string): Promise<QueueDepth>;
  /** Sends one message. @returns its message id */
  send(queueUrl: string, message: OutgoingMessage): Promise<string>;
  /**
   * Sends messages to one queue, in order. Throws when the queue refuses any; the messages
   * before it may have been sent.
   */
  sendBatch(queueUrl: string, messages: readonly OutgoingMessage[]): Promise<void>;
  /**
   * One receive of up to `max` messages (SQS returns at most 10), without waiting for any and
   * without deleting them: they are visible again after `visibilitySeconds`.
   */
  receive(
    queueUrl: string,
    options: { readonly max: number; readonly visibilitySeconds: number },
  ): Promise<ReceivedMessage[]>;
  /**
   * Moves messages between queues at least once: receive a batch (long poll), send it to the
   * target, delete what was sent from the source.
   *
   * Identity survives the move: each copy carries `fanin-origin-message-id` (kept from the
   * source when the message was moved before, else the source's message id), its body as is (a
   * claim-check pointer stays a pointer), its message attributes, and on a FIFO target its group
   * and a deduplication id of the source message id. A crash between the send and the delete
   * leaves a duplicate with the same identity, which the reply path recognises.
   *
   * Stops when `max` is reached, `emptyReceives` consecutive receives found nothing (`drained`),
   * a send is refused (`failure`), `stop()` says so or `signal` is aborted. Deletes that fail are
   * retried, and those still failing are returned in `undeleted`.
   */
  move(request: MoveRequest): Promise<MoveResult>;
}
