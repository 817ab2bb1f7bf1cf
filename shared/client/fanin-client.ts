import { randomUUID } from 'node:crypto';
import {
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { PRODUCER_PREFIX, READER_PREFIXES, type S3ClaimCheck } from '../adapters/s3-claim-check.ts';
import { CancellationAttribute } from '../engine/cancellation.ts';
import { FAILURE_ATTRIBUTE } from '../engine/completion/failures.ts';
import { WireAttribute } from '../engine/correlation.ts';
import { HEARTBEAT_ATTRIBUTE } from '../engine/responders.ts';
import { ATTEMPT_ATTRIBUTE } from '../engine/retries.ts';
import type { PartitionedDestination } from '../partitions/destination.ts';
import type { RoutingPolicy } from '../partitions/routing.ts';

/** A sub-request as a responder receives it: the payload resolved, the fanin attributes at hand. */
export interface ReceivedSubRequest {
  readonly queueUrl: string;
  readonly receiptHandle: string;
  readonly messageId: string;
  readonly body: unknown;
  readonly aggregateId?: string;
  readonly replyId?: string;
  readonly replyTo?: string;
  readonly definition?: string;
  /**
   * Which attempt this sub-request is, when it is a retry: 2 on, for a definition
   * with `responders.retry` (attribute `fanin-attempt`; docs/wire-contract.md, "Retried
   * sub-requests"). A retry is the same work: reply once, whichever attempt you answer.
   */
  readonly attempt?: number;
  /** Every `fanin-*` attribute, to copy onto the reply (the wire contract). */
  readonly faninAttributes: Readonly<Record<string, string>>;
  /** The X-Ray trace it carried (SQS's `AWSTraceHeader`): {@link FaninClient.reply} passes it on. */
  readonly traceHeader?: string;
  /**
   * Set when the message is a cancellation notice, not a sub-request (a definition with
   * `cancelOutstanding`; docs/wire-contract.md, "Cancellation notice"): the aggregate ended with
   * this outcome, so stop the work for its `replyId` and {@link FaninClient.ack} the notice; there
   * is nothing to reply to.
   */
  readonly cancelled?: { readonly outcome: string; readonly completedBy?: string };
}

/** Options of a {@link FaninClient}. */
export interface FaninClientOptions {
  readonly sqs: SQSClient;
  /** fanin's ingress queue, for {@link FaninClient.sendRequest}. */
  readonly ingressQueueUrl?: string;
  /** The reply destination: replies follow its routing when their reply-to partition is unavailable. */
  readonly replies?: PartitionedDestination;
  /**
   * The claim-check path for large payloads (both directions): what this client sends is stored
   * under `incoming/` (the producer prefix, the only one fanin reads pointers to); what it
   * receives may point under `incoming/`, `requests/` or `outputs/` of the same bucket.
   */
  readonly claimCheck?: S3ClaimCheck;
}

/**
 * A small client for producers and responders. Everything it does is also possible with the AWS
 * CLI and the wire contract (docs/wire-contract.md); it adds the claim check for large payloads
 * and partition routing for replies.
 *
 * @example
 * const client = new FaninClient({ sqs, ingressQueueUrl, replies, claimCheck });
 * await client.sendRequest('loan', { recipients: ['bank-a'], payload: { amount: 1000 } });
 * for (const sub of await client.receive(bankQueueUrl)) {
 *   await client.reply(sub, { rate: 3.1 });
 *   await client.ack(sub);
 * }
 */
export class FaninClient {
  private readonly options: FaninClientOptions;

  public constructor(options: FaninClientOptions) {
    this.options = options;
  }

  /** Sends a request to the ingress queue. Returns the request id (given or generated). */
  public async sendRequest(
    definition: string,
    body: Record<string, unknown>,
    options: {
      readonly requestId?: string;
      readonly aggregateId?: string;
      /** An X-Ray trace header to send as `AWSTraceHeader`: fanin passes it on to the sub-requests and the result. */
      readonly traceHeader?: string;
    } = {},
  ): Promise<string> {
    const queueUrl = this.options.ingressQueueUrl;
    if (!queueUrl) throw new Error('FaninClient has no ingressQueueUrl');
    const requestId = options.requestId ?? randomUUID();
    const attributes: Record<string, MessageAttributeValue> = {
      [WireAttribute.DEFINITION]: text(definition),
      [WireAttribute.REQUEST_ID]: text(requestId),
      ...(options.aggregateId ? { [WireAttribute.AGGREGATE_ID]: text(options.aggregateId) } : {}),
    };
    await this.sendTo(queueUrl, JSON.stringify(body), attributes, options.traceHeader);
    return requestId;
  }

  /** Receives sub-requests (or any fanin messages) from a queue, payloads resolved. */
  public async receive(
    queueUrl: string,
    options: {
      readonly max?: number;
      readonly waitSeconds?: number;
      readonly visibilityTimeoutSeconds?: number;
    } = {},
  ): Promise<ReceivedSubRequest[]> {
    const { Messages = [] } = await this.options.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: options.max ?? 10,
        WaitTimeSeconds: options.waitSeconds ?? 0,
        ...(options.visibilityTimeoutSeconds !== undefined
          ? { VisibilityTimeout: options.visibilityTimeoutSeconds }
          : {}),
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['AWSTraceHeader'],
      }),
    );
    return Promise.all(Messages.map((m) => this.toSubRequest(queueUrl, m)));
  }

  /**
   * Replies to a sub-request: the body as JSON, the sub-request's `fanin-*` attributes copied,
   * sent to its reply-to partition — or, when that partition is unavailable (disabled, at its
   * threshold, unreachable) and the reply destination is known, to the partition the destination's
   * affinity routing picks for the aggregate. Large bodies take the claim-check path.
   *
   * @returns the partition it went to, when known.
   */
  public async reply(
    subRequest: ReceivedSubRequest,
    body: unknown,
  ): Promise<{ queueUrl: string; partition?: number }> {
    return this.answer(subRequest, body, {});
  }

  /**
   * Answers a sub-request with a failure (docs/wire-contract.md, "Failed reply"): the reply with
   * the `fanin-failure` attribute set to `error`; `detail` is its body, kept beside the result.
   * The definition's `toleratedFailureCount` / `toleratedFailurePercentage` decide what follows.
   */
  public async fail(
    subRequest: ReceivedSubRequest,
    error: string,
    detail: unknown = null,
  ): Promise<{ queueUrl: string; partition?: number }> {
    return this.answer(subRequest, detail, { [FAILURE_ATTRIBUTE]: error.trim() === '' ? 'failed' : error });
  }

  /**
   * Tells fanin this sub-request is still being worked on (docs/wire-contract.md, "Heartbeat"): a
   * message with its `fanin-*` attributes and `fanin-heartbeat`, sent where its reply would go.
   * For a definition with `responders.heartbeatSeconds`, one received before the recipient's
   * deadline extends it, and a round of retries passes the recipient by while it holds. It is
   * never a reply; a heartbeat after the deadline changes nothing.
   */
  public async heartbeat(subRequest: ReceivedSubRequest): Promise<{ queueUrl: string; partition?: number }> {
    return this.answer(subRequest, {}, { [HEARTBEAT_ATTRIBUTE]: '1' });
  }

  private async answer(
    subRequest: ReceivedSubRequest,
    body: unknown,
    extra: Record<string, string>,
  ): Promise<{ queueUrl: string; partition?: number }> {
    const attributes = {
      ...Object.fromEntries(Object.entries(subRequest.faninAttributes).map(([k, v]) => [k, text(v)])),
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, text(v)])),
    };
    const payload = JSON.stringify(body);
    const destination = this.options.replies;
    const replyTo = subRequest.replyTo;
    if (destination && subRequest.aggregateId) {
      const statuses = await destination.status();
      const own = statuses.find((s) => s.queueUrl === replyTo);
      const target = own?.available
        ? own
        : await destination.choose({ kind: 'affinity', key: subRequest.aggregateId });
      await this.sendTo(target.queueUrl, payload, attributes, subRequest.traceHeader);
      return { queueUrl: target.queueUrl, partition: target.index };
    }
    if (!replyTo) throw new Error(`sub-request ${subRequest.messageId} has no ${WireAttribute.REPLY_TO}`);
    await this.sendTo(replyTo, payload, attributes, subRequest.traceHeader);
    return { queueUrl: replyTo };
  }

  /**
   * Publishes a message to the reply destination by routing policy — for self-starting
   * definitions, whose first message opens the aggregate (e.g. a bid).
   */
  public async publish(
    definition: string,
    body: unknown,
    policy: RoutingPolicy = { kind: 'balanced' },
    attributes: Readonly<Record<string, string>> = {},
  ): Promise<number> {
    const destination = this.options.replies;
    if (!destination) throw new Error('FaninClient has no reply destination');
    const message = await this.encode(JSON.stringify(body), {
      [WireAttribute.DEFINITION]: text(definition),
      ...Object.fromEntries(Object.entries(attributes).map(([k, v]) => [k, text(v)])),
    });
    return (await destination.send({ body: message.body, attributes: message.attributes }, policy)).partition;
  }

  /** Deletes a handled sub-request from its queue. */
  public async ack(subRequest: ReceivedSubRequest): Promise<void> {
    await this.options.sqs.send(
      new DeleteMessageCommand({ QueueUrl: subRequest.queueUrl, ReceiptHandle: subRequest.receiptHandle }),
    );
  }

  private async sendTo(
    queueUrl: string,
    body: string,
    attributes: Record<string, MessageAttributeValue>,
    traceHeader?: string,
  ): Promise<void> {
    const message = await this.encode(body, attributes);
    const fifo = queueUrl.endsWith('.fifo');
    await this.options.sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: message.body,
        MessageAttributes: message.attributes,
        ...(traceHeader ? { MessageSystemAttributes: { AWSTraceHeader: text(traceHeader) } } : {}),
        ...(fifo
          ? {
              MessageGroupId: attributes[WireAttribute.AGGREGATE_ID]?.StringValue ?? 'fanin',
              MessageDeduplicationId: randomUUID(),
            }
          : {}),
      }),
    );
  }

  private async encode(
    body: string,
    attributes: Record<string, MessageAttributeValue>,
  ): Promise<{ body: string; attributes: Record<string, MessageAttributeValue> }> {
    return this.options.claimCheck
      ? this.options.claimCheck.encode(body, attributes, `${PRODUCER_PREFIX}${randomUUID()}`)
      : { body, attributes };
  }

  private async toSubRequest(queueUrl: string, message: Message): Promise<ReceivedSubRequest> {
    const strings: Record<string, string> = {};
    for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
      if (value.StringValue !== undefined) strings[name] = value.StringValue;
    }
    const raw = message.Body ?? '';
    const resolved = this.options.claimCheck
      ? await this.options.claimCheck.decode(raw, strings, READER_PREFIXES)
      : raw;
    let body: unknown = resolved;
    try {
      body = JSON.parse(resolved);
    } catch {
      // Not JSON: hand the text over as it is.
    }
    const fanin = Object.fromEntries(Object.entries(strings).filter(([name]) => name.startsWith('fanin-')));
    const optional = (name: string) => (strings[name] !== undefined ? strings[name] : undefined);
    return {
      queueUrl,
      receiptHandle: message.ReceiptHandle ?? '',
      messageId: message.MessageId ?? '',
      body,
      ...(Number(strings[ATTEMPT_ATTRIBUTE]) > 1 ? { attempt: Number(strings[ATTEMPT_ATTRIBUTE]) } : {}),
      faninAttributes: fanin,
      ...(optional(WireAttribute.AGGREGATE_ID) ? { aggregateId: optional(WireAttribute.AGGREGATE_ID) } : {}),
      ...(optional(WireAttribute.REPLY_ID) ? { replyId: optional(WireAttribute.REPLY_ID) } : {}),
      ...(optional(WireAttribute.REPLY_TO) ? { replyTo: optional(WireAttribute.REPLY_TO) } : {}),
      ...(optional(WireAttribute.DEFINITION) ? { definition: optional(WireAttribute.DEFINITION) } : {}),
      ...(message.Attributes?.AWSTraceHeader ? { traceHeader: message.Attributes.AWSTraceHeader } : {}),
      ...(optional(CancellationAttribute.CANCELLED)
        ? {
            cancelled: {
              outcome: optional(CancellationAttribute.CANCELLED) as string,
              ...(optional(CancellationAttribute.COMPLETED_BY)
                ? { completedBy: optional(CancellationAttribute.COMPLETED_BY) }
                : {}),
            },
          }
        : {}),
    };
  }
}

function text(value: string): MessageAttributeValue {
  return { DataType: 'String', StringValue: value };
}
