import { parseArgs } from 'node:util';
import { between, demoProcess } from './common.ts';

/**
 * The loan-broker demo's producer: a customer-facing service asking for quotes. Each request goes
 * to fanin's ingress queue through the client library; fanin fans it out to the five banks.
 *
 *   node --import tsx local/demo/loan-producer.ts --count 3 --interval-ms 1500 --run abc123
 */
const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '3' },
    'interval-ms': { type: 'string', default: '1500' },
    run: { type: 'string', default: Date.now().toString(36) },
  },
});
const demo = await demoProcess();
const count = Number(values.count);
for (let n = 1; n <= count && !demo.stopping(); n++) {
  const aggregateId = `loan-${values.run}-${n}`;
  const amount = Math.round(between(100, 900)) * 1000;
  const termYears = [15, 20, 25, 30][n % 4] ?? 30;
  await demo.client.sendRequest(
    'loan-broker',
    { payload: { customer: `customer-${n}`, amount, termYears } },
    { aggregateId, requestId: aggregateId },
  );
  console.log(
    `asked five banks to quote ${amount.toLocaleString('en-US')} over ${termYears} years: ${aggregateId}`,
  );
  demo.tell({ sent: aggregateId });
  if (n < count) await demo.sleep(Number(values['interval-ms']));
}
process.exit(0);
