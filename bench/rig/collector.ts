import { DeleteMessageBatchCommand, ReceiveMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { prose } from '../report/format.ts';
import { sleep } from '../workload/sleep.ts';
import { Loops } from './loops.ts';

/** One output seen by the collector. */
export interface SeenOutput {
  readonly type: string;
  readonly at: number;
  readonly body: Record<string, unknown>;
}

/** Consumes fanin's output queues, as a downstream consumer would. */
export class OutputCollector extends Loops {
  /** Completed or timed-out results, by aggregate id. */
  public readonly results = new Map<string, SeenOutput>();
  /** Outputs by type (errors, late and unknown replies included). */
  public readonly types = new Map<string, number>();
  private readonly sqs: SQSClient;
  private readonly queueUrls: readonly string[];

  public constructor(sqs: SQSClient, queueUrls: readonly string[]) {
    super();
    this.sqs = sqs;
    this.queueUrls = queueUrls;
  }

  /** Starts one loop per output queue. */
  public start(): void {
    this.startLoops(this.queueUrls.map((url) => () => this.collectOnce(url)));
  }

  /** Resolves when every aggregate in `ids` has a result; throws after `timeoutMs`. */
  public async waitFor(ids: readonly string[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (ids.some((id) => !this.results.has(id))) {
      if (Date.now() > deadline) {
        const missing = ids.filter((id) => !this.results.has(id));
        throw new Error(
          prose`${missing.length} of ${ids.length} aggregates have no result after ${timeoutMs} ms (e.g.
            ${missing.slice(0, 3).join(', ')}); outputs seen:
            ${JSON.stringify(Object.fromEntries(this.types))}`,
        );
      }
      await sleep(20);
    }
  }

  private async collectOnce(queueUrl: string): Promise<void> {
    const { Messages = [] } = await this.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    if (Messages.length === 0) return;
    const at = performance.now();
    for (const message of Messages) {
      const body = JSON.parse(message.Body ?? '{}') as Record<string, unknown>;
      const type = String(body.type);
      this.types.set(type, (this.types.get(type) ?? 0) + 1);
      const aggregateId = typeof body.aggregateId === 'string' ? body.aggregateId : undefined;
      if (aggregateId && (type === 'fanin.aggregate.completed' || type === 'fanin.aggregate.timed-out')) {
        if (!this.results.has(aggregateId)) this.results.set(aggregateId, { type, at, body });
      }
    }
    await this.sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
}
