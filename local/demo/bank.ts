import { parseArgs } from 'node:util';
import type { ReceivedSubRequest } from '../../shared/client/fanin-client.ts';
import { between, demoProcess } from './common.ts';

/**
 * A bank of the loan-broker demo: a responder, as another team would write it. It reads quote
 * requests from its own queue, takes a while to think, and replies with a rate through the client
 * library (which copies the `fanin-*` attributes and sends to the reply-to partition).
 *
 * Each bank has its own character: a base rate and a latency range. bank-5 has the best rates but
 * is slow: it sends a heartbeat every 2 s while it thinks (which extends its own deadline), and it
 * often misses the loan broker's deadline all the same, so its quote arrives late. bank-4 loses
 * the first sub-request of every second loan (as a crashed worker would) and answers the retry
 * fanin sends it 3 s later.
 *
 *   node --import tsx local/demo/bank.ts --bank bank-3
 */
const PROFILES: Record<string, { rate: number; minMs: number; maxMs: number }> = {
  'bank-1': { rate: 3.9, minMs: 200, maxMs: 900 },
  'bank-2': { rate: 3.6, minMs: 300, maxMs: 1500 },
  'bank-3': { rate: 3.3, minMs: 500, maxMs: 2500 },
  'bank-4': { rate: 4.2, minMs: 100, maxMs: 600 },
  'bank-5': { rate: 3.0, minMs: 4000, maxMs: 14_000 },
};

const { values } = parseArgs({ options: { bank: { type: 'string' } } });
const bank = values.bank ?? 'bank-1';
const profile = PROFILES[bank] ?? { rate: 4, minMs: 200, maxMs: 2000 };
const demo = await demoProcess();
const queue = demo.target.responderQueues.find((q) => q.name === `${demo.target.prefix}-${bank}`);
if (!queue) {
  console.error(`no queue ${demo.target.prefix}-${bank} in the runtime (responderQueues of fanin.config.ts)`);
  process.exit(1);
}

const inFlight = new Set<Promise<void>>();
/** The sub-requests (aggregate id and reply id) a cancellation notice told this bank to stop. */
const cancelled = new Set<string>();
const keyOf = (sub: ReceivedSubRequest) => `${sub.aggregateId}\u0000${sub.replyId}`;
/** Whether this bank loses this sub-request: bank-4 loses the first attempt of every second loan. */
const loses = (sub: ReceivedSubRequest) =>
  bank === 'bank-4' && sub.attempt === undefined && /[02468]$/.test(sub.aggregateId ?? '');
async function quote(sub: ReceivedSubRequest): Promise<void> {
  const started = Date.now();
  if (loses(sub)) {
    await demo.client.ack(sub);
    console.log(`lost the sub-request for ${sub.aggregateId}: fanin asks again`);
    return;
  }
  const thinking = between(profile.minMs, profile.maxMs);
  // A long think says it is still working, every 2 s, so it is not taken for silent.
  for (let left = thinking; left > 0; left -= 2_000) {
    await demo.sleep(Math.min(left, 2_000));
    if (left > 2_000 && !demo.stopping() && !cancelled.has(keyOf(sub))) await demo.client.heartbeat(sub);
  }
  if (demo.stopping()) return; // left on the queue: SQS hands it out again after its visibility timeout
  if (cancelled.delete(keyOf(sub))) {
    // The loan broker decided without this bank: no quote to send.
    await demo.client.ack(sub);
    return;
  }
  const request = sub.body as { amount?: number; termYears?: number };
  const rate = Math.round((profile.rate + between(-0.4, 0.4)) * 100) / 100;
  await demo.client.reply(sub, { bank, rate, term: request.termYears ?? 30 });
  await demo.client.ack(sub);
  const attempt = sub.attempt !== undefined ? ` (attempt ${sub.attempt})` : '';
  console.log(`quoted ${rate.toFixed(2)}% for ${sub.aggregateId}${attempt} after ${Date.now() - started} ms`);
}

demo.tell({ ready: bank });
while (!demo.stopping()) {
  const subs = await demo.client.receive(queue.url, { max: 10, waitSeconds: 1 });
  for (const sub of subs) {
    if (sub.cancelled) {
      // A cancellation notice (the definition's cancelOutstanding): stop the quote for it.
      cancelled.add(keyOf(sub));
      await demo.client.ack(sub);
      console.log(
        `stopped quoting for ${sub.aggregateId}: cancelled, the request ${sub.cancelled.outcome} (${sub.cancelled.completedBy ?? 'no reason'})`,
      );
      continue;
    }
    const job = quote(sub)
      .catch((error: unknown) =>
        console.error(`quote for ${sub.aggregateId} failed: ${(error as Error).message}`),
      )
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
  }
}
await Promise.all(inFlight);
process.exit(0);
