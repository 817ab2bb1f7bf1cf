import { defineConfig } from './local/config.ts';

/**
 * The local runtime's configuration (`npm start`): the topology options the CDK construct takes,
 * plus the demos' responder queues. Edit the definitions here and restart; see
 * docs/definitions.md for every field and README.md ("Local runtime and CLI") for the rest.
 */
export default defineConfig({
  prefix: 'fanin',
  replyPartitions: 2,
  // The distributor every 10 s here, so the dashboard shows it at work; a stack needs whole minutes
  // (an EventBridge rate schedule).
  partitioning: { highWatermark: 100, lowWatermark: 20, distributorIntervalSeconds: 10 },
  // The loan broker's banks: other teams' queues in AWS, created here so the demo can run.
  responderQueues: ['bank-1', 'bank-2', 'bank-3', 'bank-4', 'bank-5'],
  definitions: (prefix) => [
    {
      // The Aggregator pattern's loan broker (Scatter-Gather): a recipient list to five banks, the lowest rate
      // wins, and a rate at or under 3.5% completes at once (time-out with override); otherwise
      // the best rate so far is taken at the deadline, with the banks that did not answer listed.
      name: 'loan-broker',
      description: 'Best loan rate from five banks; a rate of 3.5% or less completes at once',
      fanOut: {
        type: 'recipient-list',
        recipients: [1, 2, 3, 4, 5].map((n) => `${prefix}-bank-${n}`),
      },
      completion: {
        strategy: 'override',
        score: { source: 'path', path: '$.rate' },
        threshold: 3.5,
        direction: 'below',
      },
      aggregation: {
        algorithm: 'best',
        criteria: [
          { path: '$.rate', order: 'min' },
          { path: '$.term', order: 'min' },
        ],
      },
      // Shorter than the AWS example's 30 s so the demo does not keep you waiting.
      timeoutSeconds: 10,
      // A bank may answer with a failure (attribute fanin-failure): two of five are tolerated and
      // listed beside the best quote; a third ends the request as failed at once.
      toleratedFailureCount: 2,
      // A request may ask for its own deadline and its banks' own, e.g.
      // "parameters": { "timeoutSeconds": 60, "recipientTimeoutSeconds": 50 }.
      requestParameters: {
        timeoutSeconds: { min: 5, max: 120 },
        recipientTimeoutSeconds: { min: 2, max: 110 },
      },
      // Once a request is decided (a rate at the threshold, the deadline), the banks still working
      // on it get a cancellation notice on their queue (attribute fanin-cancelled) and stop.
      cancelOutstanding: true,
      // Each bank has 8 s of its own; a heartbeat (a slow bank saying it is still working) buys it
      // 4 s more, up to the 10 s deadline; a bank silent at 3 s is asked once more (fanin-attempt 2).
      responders: { timeoutSeconds: 8, heartbeatSeconds: 4, retry: { attempts: 1, intervalSeconds: 3 } },
    },
    {
      // The Aggregator pattern's auction: self-starting (the first bid opens it), bids correlated by auction id,
      // the highest bid when the auction closes wins; a bid after the close is late.
      name: 'auction',
      mode: 'self-starting',
      correlation: { source: 'path', path: '$.auctionId' },
      replyId: { source: 'path', path: '$.bidId' },
      completion: { strategy: 'timeout' },
      aggregation: { algorithm: 'best', criteria: [{ path: '$.price', order: 'max' }] },
      timeoutSeconds: 6,
    },
    {
      // Completed only by an external event (`npx fanin complete ...`) or its deadline. A long
      // wait: who has approved so far goes to the status output every minute, as a snapshot.
      name: 'order-approval',
      description: 'Collects replies until an approval event arrives',
      completion: { strategy: 'external' },
      timeoutSeconds: 24 * 3600,
      snapshotIntervalSeconds: 60,
      externalEventPattern: { source: ['example.orders'], 'detail-type': ['OrderApproved'] },
    },
  ],
});
