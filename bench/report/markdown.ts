import { arrivalSection } from './arrival.ts';
import { costSection } from './cost.ts';
import { countingSection } from './counting.ts';
import { headlineSection, introSection } from './headline.ts';
import { hotSection } from './hot.ts';
import { perReplySection } from './per-reply.ts';
import { sanitySection } from './sanity.ts';
import { scaleSection } from './scale.ts';
import type { Results } from './schema.ts';
import { storeCapacitySection } from './store-capacity.ts';

export { renderScaleSvg } from './svg.ts';

/** The markdown report (`bench/results/*.md`): every figure with the sentence that says what it is. */
export function renderMarkdown(results: Results, svgName: string): string {
  const r = results;
  return [
    ...introSection(r),
    ...headlineSection(r),
    ...arrivalSection(r),
    ...storeCapacitySection(r),
    ...perReplySection(r),
    ...scaleSection(r, svgName),
    ...costSection(r),
    ...hotSection(r),
    ...countingSection(r),
    ...sanitySection(r),
  ].join('\n');
}
