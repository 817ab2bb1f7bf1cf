/**
 * How many kit runs a second: `npx tsx packages/testing/throughput.ts [runs]` (default 1,000).
 * Each run is one test of the loan broker of fanin.config.ts: a simulation built, a request fanned
 * out to five banks, a reply, a duplicate reply, a failure, and the clock moved past the 10 s
 * deadline (its timer delivered, the result built and published). Prints the warm-up and then
 * the measured runs' rate. Not part of the package (not in its `files`).
 */
import { fromConfig } from './src/index.ts';

const runs = Number(process.argv[2] ?? 1000);
const config = await fromConfig('fanin.config.ts');

async function one(i: number): Promise<void> {
  const run = config.simulate('loan-broker');
  await run.request({ aggregateId: `loan-${i}`, payload: { amount: 250000 } });
  await run.reply('bank-1', { rate: 4.2, term: 30 });
  await run.reply('bank-2', { rate: 3.9, term: 30 }, { copies: 2 });
  await run.fail('bank-3', 'down');
  await run.advance('11s');
  if (run.result()?.completedBy !== 'deadline') throw new Error(`run ${i}: ${JSON.stringify(run.result())}`);
}

const warm = performance.now();
for (let i = 0; i < 100; i += 1) await one(i);
const warmMs = performance.now() - warm;
const start = performance.now();
const cpu = process.cpuUsage();
for (let i = 0; i < runs; i += 1) await one(i);
const ms = performance.now() - start;
// CPU time too: on a shared machine the wall clock counts other processes' turns.
const used = process.cpuUsage(cpu);
const cpuMs = (used.user + used.system) / 1000;
console.log(
  `warm-up: 100 runs in ${(warmMs / 1000).toFixed(2)} s; measured: ${runs} runs in ${(ms / 1000).toFixed(2)} s, ${Math.round((runs * 1000) / ms)} runs/s (${(ms / runs).toFixed(1)} ms a run); CPU ${(cpuMs / 1000).toFixed(2)} s, ${Math.round((runs * 1000) / cpuMs)} runs per CPU-second`,
);
