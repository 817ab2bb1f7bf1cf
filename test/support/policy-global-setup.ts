import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CALLS_DIR_VARIABLE } from './call-recorder.ts';
import { proveRecordedCalls, summaryOf } from './suite-proof.ts';

/**
 * Where the policy proof's report is written: `coverage/policy-proof.json` (the test output, not
 * committed), or `FANIN_POLICY_REPORT`.
 */
export const REPORT_FILE =
  process.env.FANIN_POLICY_REPORT ??
  resolve(dirname(fileURLToPath(import.meta.url)), '../../coverage/policy-proof.json');

/** Where the records of the run are kept: `policy-calls/` beside the report. */
const RECORDS_DIR = join(dirname(REPORT_FILE), 'policy-calls');

/**
 * Global setup of the integration project: the policy proof of the run. Before the workers start,
 * it makes the directory they record every AWS call to (test/support/record-calls.ts, the
 * project's setup file); after the last test file, it evaluates every call a fanin function made
 * against the synthesized policies (test/support/suite-proof.ts), writes the report, prints one
 * line, and fails the run (exit code 1) when any call would be denied on AWS.
 */
export default function setup(): () => Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fanin-calls-'));
  const previous = process.env[CALLS_DIR_VARIABLE];
  process.env[CALLS_DIR_VARIABLE] = dir;
  return async () => {
    try {
      const startedAt = performance.now();
      const proof = await proveRecordedCalls(dir);
      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      mkdirSync(dirname(REPORT_FILE), { recursive: true });
      writeFileSync(REPORT_FILE, `${JSON.stringify(proof, null, 2)}\n`);
      console.log(`\n${summaryOf(proof, REPORT_FILE)} (${seconds} s)`);
      if (proof.denials.length > 0) {
        const listed = proof.denials
          .slice(0, 20)
          .map(
            (d) =>
              `  ${d.fn} ${d.action} ${d.arn} (${d.stack}; ${d.call}${d.testFile ? `; in ${d.testFile}` : ''}): ${d.result} by ${d.deniedBy.join('; ')}`,
          )
          .join('\n');
        console.error(`\n[policy] calls AWS would deny:\n${listed}\n`);
        // A teardown's error does not fail a vitest run; its exit code does.
        process.exitCode = 1;
      }
    } catch (error) {
      console.error('[policy] the policy proof failed:', error);
      process.exitCode = 1;
    } finally {
      // The records are kept beside the report (the previous run's replaced).
      rmSync(RECORDS_DIR, { recursive: true, force: true });
      mkdirSync(dirname(RECORDS_DIR), { recursive: true });
      cpSync(dir, RECORDS_DIR, { recursive: true });
      rmSync(dir, { recursive: true, force: true });
      if (previous === undefined) delete process.env[CALLS_DIR_VARIABLE];
      else process.env[CALLS_DIR_VARIABLE] = previous;
    }
  };
}
