import type { Reporter, TestModule, Vitest } from 'vitest/node';

/**
 * A reporter beside vitest's default one (vitest.config.ts): after the summary ("3 skipped"), one
 * line per reason a test was skipped, with how many tests and which files, so `npm test` says
 * why without `--reporter=verbose`. The reason is the note of `context.skip(note)`, which
 * `requireTool` (test/support/tools.ts) gives as the missing tool and how to get it.
 */
export default class SkipReasons implements Reporter {
  private vitest: Vitest | undefined;

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const byReason = new Map<string, { tests: number; files: Set<string> }>();
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        const result = test.result();
        // A test left out by a filter (-t, .only elsewhere) was not skipped for a reason.
        if (result.state !== 'skipped' || test.options.mode !== 'run') continue;
        const reason = result.note ?? 'no reason given';
        const entry = byReason.get(reason) ?? { tests: 0, files: new Set<string>() };
        entry.tests += 1;
        entry.files.add(module.relativeModuleId);
        byReason.set(reason, entry);
      }
    }
    if (byReason.size === 0) return;
    const log = (line: string) => (this.vitest ? this.vitest.logger.log(line) : console.log(line));
    log('');
    log('Skipped, and why (FANIN_REQUIRE_TOOLS=1 makes each a failure instead):');
    for (const [reason, { tests, files }] of byReason) {
      log(`  ${tests} skipped (${[...files].sort().join(', ')}): ${reason}`);
    }
  }
}
