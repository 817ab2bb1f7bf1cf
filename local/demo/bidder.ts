import { parseArgs } from 'node:util';
import { between, demoProcess } from './common.ts';

/**
 * A bidder of the auction demo (a self-starting aggregator, as in the Aggregator pattern's auction): there is no request; the
 * first bid on a lot opens its auction, and every bid is correlated by its `auctionId`. Bids go to
 * the reply destination through the client library, with affinity by auction id so one auction's
 * bids share a partition. With `--late-ms`, one more bid is sent after the auction has closed: it
 * is reported on the late output and does not reopen the auction.
 *
 *   node --import tsx local/demo/bidder.ts --name alice --auctions lot-1,lot-2 --bids 3
 */
const { values } = parseArgs({
  options: {
    name: { type: 'string', default: 'bidder' },
    auctions: { type: 'string', default: 'lot-1' },
    bids: { type: 'string', default: '3' },
    'spread-ms': { type: 'string', default: '4000' },
    'late-ms': { type: 'string' },
  },
});
const demo = await demoProcess();
const name = values.name ?? 'bidder';
const auctions = (values.auctions ?? '').split(',').filter(Boolean);
const spread = Number(values['spread-ms']);
const plan: { at: number; auctionId: string; n: number }[] = [];
for (const auctionId of auctions) {
  for (let n = 1; n <= Number(values.bids); n++) plan.push({ at: between(0, spread), auctionId, n });
  if (values['late-ms']) plan.push({ at: Number(values['late-ms']), auctionId, n: Number(values.bids) + 1 });
}
plan.sort((a, b) => a.at - b.at);
const started = Date.now();
const price = new Map<string, number>();
for (const bid of plan) {
  await demo.sleep(bid.at - (Date.now() - started));
  if (demo.stopping()) break;
  const next = Math.round((price.get(bid.auctionId) ?? between(80, 120)) + between(5, 40));
  price.set(bid.auctionId, next);
  const bidId = `${name}-${bid.auctionId}-${bid.n}`;
  const partition = await demo.client.publish(
    'auction',
    { auctionId: bid.auctionId, bidId, bidder: name, price: next },
    { kind: 'affinity', key: bid.auctionId },
  );
  console.log(`bid ${next} on ${bid.auctionId} (${bidId}, partition ${partition})`);
}
process.exit(0);
