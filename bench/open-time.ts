/**
 * The open-time dimension alone (`run/open-time.ts`), without the rest of the benchmark:
 * `npx tsx bench/open-time.ts [--full]` prints its figures as JSON (what docs/costs.md's
 * "before" and "after" tables were measured with).
 */
import { startEmulators } from '../local/emulators.ts';
import { loadPrices } from './cost.ts';
import { OPEN_SECONDS_FULL, OPEN_SECONDS_QUICK, runOpenTime } from './run/open-time.ts';

const emulators = await startEmulators({ eventBridge: false });
try {
  const seconds = process.argv.includes('--full') ? OPEN_SECONDS_FULL : OPEN_SECONDS_QUICK;
  const figures = await runOpenTime(emulators.connection, await loadPrices(), seconds);
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await emulators.stop();
}
