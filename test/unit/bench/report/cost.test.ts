/** The cost section: the bills side by side, and the fixed costs checked against README's figure. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { costSection } from '../../../../bench/report/cost.ts';
import type { Results } from '../../../../bench/report/schema.ts';

const results = JSON.parse(
  readFileSync(new URL('../../../../bench/results/latest.json', import.meta.url), 'utf8'),
) as Results;
const withReadme = (readme: number | null): Results => ({
  ...results,
  cost: { ...results.cost, fixed_monthly: { ...results.cost.fixed_monthly, readme_total_usd: readme } },
});

describe('the cost section', () => {
  it("gives fanin's and Step Functions' end-to-end totals in the bill table", () => {
    const text = costSection(results).join('\n');
    expect(text).toContain(
      `| **fanin, end to end** | | | | | **$${results.cost.fanin_total_per_million.toFixed(2)}** |`,
    );
    const sfn = results.cost.step_functions_standard.total_per_million.toFixed(2);
    expect(text).toContain(`| **Step Functions Standard, end to end** | | | | | **$${sfn}** |`);
  });

  it("agrees with README's fixed monthly total within five cents, and says so when it no longer does", () => {
    const total = results.cost.fixed_monthly.total_usd;
    expect(costSection(withReadme(total + 0.04)).join('\n')).toContain('so the two agree');
    const stale = costSection(withReadme(total + 1)).join('\n');
    expect(stale).toContain('which no longer agrees');
    expect(stale).not.toContain('so the two agree');
    expect(costSection(withReadme(null)).join('\n')).toContain("README's total was not found");
  });
});
