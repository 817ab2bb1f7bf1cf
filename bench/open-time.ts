/** The open-time dimension alone (`run/open-time.ts`), without the rest of the benchmark. */
import { startEmulators } from '../local/emulators.ts';
import { loadPrices } from './cost/prices.ts';
import {
  OPEN_SECONDS_FULL,
  OPEN_SECONDS_QUICK,
  runOpenTime,
  runResponderCosts,
  runTimerKinds,
} from './run/open-time.ts';

const emulators = await startEmulators({ eventBridge: false });
try {
  const seconds = process.argv.includes('--full') ? OPEN_SECONDS_FULL : OPEN_SECONDS_QUICK;
  const prices = await loadPrices();
  if (process.argv.includes('--responders')) {
    // The cost of a retry and of a cancellation per recipient, alone.
    process.stdout.write(
      `${JSON.stringify(await runResponderCosts(emulators.connection, prices), null, 2)}\n`,
    );
    process.exit(0);
  }
  const only = process.argv.includes('--kinds-only');
  const figures = only ? [] : await runOpenTime(emulators.connection, prices, seconds);
  const kinds =
    only || process.argv.includes('--kinds') ? await runTimerKinds(emulators.connection, prices) : undefined;
  process.stdout.write(
    `${JSON.stringify(kinds ? { by_open_seconds: figures, by_kind: kinds } : figures, null, 2)}\n`,
  );
} finally {
  await emulators.stop();
}
