import { arrivalSection } from './report/arrival.ts';
import { costSection } from './report/cost.ts';
import { countingSection } from './report/counting.ts';
import { headlineSection, introSection } from './report/headline.ts';
import { hotSection } from './report/hot.ts';
import { perReplySection } from './report/per-reply.ts';
import { sanitySection } from './report/sanity.ts';
import { scaleSection } from './report/scale.ts';
import { storeCapacitySection } from './report/store-capacity.ts';
import type { Results } from './schema.ts';

export { renderScaleSvg } from './report/svg.ts';

/**
 * The markdown report (`bench/results/*.md`): every figure with the sentence that says what it is,
 * one section per module of `report/`, in this order. `svgName` is the scale chart beside it.
 */
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
