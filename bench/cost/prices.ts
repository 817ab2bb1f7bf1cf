import { readFile } from 'node:fs/promises';

/** The dated price table, `bench/prices.json`, as its JSON is typed. */
export type Prices = typeof import('../prices.json', { with: { type: 'json' }});

/** Reads `bench/prices.json`. */
export async function loadPrices(): Promise<Prices> {
  return JSON.parse(await readFile(new URL('../prices.json', import.meta.url), 'utf8')) as Prices;
}

/** Dollars per GB-second of Lambda at the assumed architecture. */
export function gbSecondPrice(prices: Prices): number {
  return prices.assumptions.lambda_architecture === 'arm64'
    ? prices.lambda.arm64_per_gb_second
    : prices.lambda.x86_64_per_gb_second;
}
