/** The dated price table and the Lambda duration price it implies. */
import { describe, expect, it } from 'vitest';
import { gbSecondPrice, loadPrices, type Prices } from '../../../../bench/cost/prices.ts';

describe('the price table', () => {
  it('is the dated us-east-1 table of bench/prices.json', async () => {
    const prices = await loadPrices();
    expect(prices.region).toBe('us-east-1');
    expect(prices.taken).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(prices.dynamodb.write_request_unit_per_million).toBeGreaterThan(0);
  });

  it("prices a Lambda GB-second at the assumed architecture's rate", async () => {
    const prices = await loadPrices();
    const on = (architecture: string): Prices => ({
      ...prices,
      lambda: { ...prices.lambda, arm64_per_gb_second: 1e-5, x86_64_per_gb_second: 2e-5 },
      assumptions: { ...prices.assumptions, lambda_architecture: architecture },
    });
    expect(gbSecondPrice(on('arm64'))).toBe(1e-5);
    expect(gbSecondPrice(on('x86_64'))).toBe(2e-5);
  });
});
