import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The integration files that take longest on two cores, longest first (measured in one run of
 * the project, each file's share of it; docs/testing.md). They start first, so that the two
 * workers end together: started last, as vitest's own order (its cache of the last run, else the
 * file size) may start them, one worker runs a file of minutes alone while the other is done.
 */
export const LONGEST_FIRST: readonly string[] = [
  'test/integration/guarantees/adversity-sizes.test.ts',
  'test/integration/guarantees/fault-matrix.test.ts',
  'test/integration/guarantees/adversity-held.test.ts',
  'test/integration/guarantees/crash-recovery.test.ts',
  'test/integration/features/distributor.test.ts',
  'test/integration/features/control-paging.test.ts',
  'test/integration/guarantees/adversity-outcome.test.ts',
  'test/integration/features/seal-limits.test.ts',
  'test/integration/guarantees/property.test.ts',
  'test/integration/guarantees/policy-proof.test.ts',
  'test/integration/features/scenarios.test.ts',
  'test/integration/guarantees/bad-input-and-control.test.ts',
  'test/integration/features/timer-horizon.test.ts',
  'test/integration/features/sweeper-time.test.ts',
];

/**
 * Vitest's order (by group, then project, then its cache or the file size), except that within a
 * project the files of {@link LONGEST_FIRST} come first, in that order.
 */
export default class LongestFirst extends BaseSequencer {
  public override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const missing = LONGEST_FIRST.filter((file) => !existsSync(join(root, file)));
    if (missing.length > 0) {
      console.warn(`[sequencer] LONGEST_FIRST names files that do not exist: ${missing.join(', ')}`);
    }
    const rank = (spec: TestSpecification): number => {
      const index = LONGEST_FIRST.indexOf(relative(root, spec.moduleId).split('\\').join('/'));
      return index < 0 ? LONGEST_FIRST.length : index;
    };
    const position = new Map(sorted.map((spec, i) => [spec, i]));
    return [...sorted].sort(
      (a, b) =>
        a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder ||
        (a.project.name === b.project.name ? rank(a) - rank(b) : 0) ||
        (position.get(a) ?? 0) - (position.get(b) ?? 0),
    );
  }
}
