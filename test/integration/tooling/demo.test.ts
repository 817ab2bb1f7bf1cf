import { randomBytes } from 'node:crypto';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../support/runtime.ts';

/**
 * The first minute of a new user: `npm start -- --demo` starts its own emulators (the test
 * emulators' endpoints are removed from its environment, as on a fresh machine), provisions,
 * runs the loan broker and the auction with their producers and responders as separate
 * processes, prints the aggregates as they complete, and exits 0 — leaving no emulator behind.
 */
describe('npm start -- --demo', () => {
  it('runs both demos end to end, prints a completed aggregate and exits 0 without leaving anything running', async () => {
    // Prepare: an environment without the test emulators, so the runtime starts its own
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (!name.startsWith('AWS_ENDPOINT_URL') && !name.startsWith('FANIN_') && !name.startsWith('VITEST')) {
        env[name] = value;
      }
    }
    const dir = await mkdtemp(join(tmpdir(), 'fanin-demo-'));
    const stateFile = join(dir, 'runtime.json');
    const prefix = `demo-${randomBytes(3).toString('hex')}`;

    // Act
    const result = await runProcess(
      'npm',
      ['start', '--silent', '--', '--demo', '--port', '0', '--prefix', prefix, '--state', stateFile],
      { env, timeoutMs: 170_000 },
    );

    // Assess
    const output = `${result.stdout}\n${result.stderr}`;
    expect(result.code, output).toBe(0);
    expect(result.stdout).toMatch(
      /emulators: fauxqs http:\/\/127\.0\.0\.1:\d+, dynamodb-local http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(result.stdout).toMatch(
      /\[outputs\] ✔ loan-broker loan-\w+-\d completed after .*: best rate [\d.]+% from bank-\d/,
    );
    expect(result.stdout).toMatch(
      /\[outputs\] ✔ auction auction:lot-\w+-\d completed after .*: winning bid \d+ by \w+/,
    );
    expect(result.stdout).toContain('"type": "fanin.aggregate.completed"');
    expect(result.stdout).toMatch(/\[demo\] done in .*: 5 aggregates/);
    expect(result.stdout).toContain('[bank-3] quoted');
    // loan-broker cancels the banks still working once a request is decided (bank-5 is slow)
    expect(result.stdout).toMatch(
      /\[bank-\d\] stopped quoting for .*: cancelled, the request (completed|timed-out)/,
    );
    // bank-4 loses the first sub-request of the second loan; fanin asks it again at 3 s
    // (responders.retry), unless the loan was decided before then
    expect(result.stdout).toMatch(/\[bank-4\] lost the sub-request for loan-\w+-2: fanin asks again/);
    const second = /\[outputs\] ✔ loan-broker (loan-\w+-2) completed after ([\d.]+) (ms|s)/.exec(
      result.stdout,
    );
    if (second && second[3] === 's' && Number(second[2]) >= 4)
      expect(result.stdout).toMatch(
        new RegExp(`\\[bank-4\\] quoted [\\d.]+% for ${second[1]} \\(attempt 2\\)`),
      );
    expect(result.stdout).toContain('[producer] asked five banks');
    expect(result.stdout).toContain('[alice] bid');
    // Stopped cleanly: the state file is gone and the DynamoDB Local it started no longer answers.
    await expect(access(stateFile)).rejects.toThrow();
    const dynamo = /dynamodb-local (http:\/\/127\.0\.0\.1:\d+)/.exec(result.stdout)?.[1] ?? '';
    await expect(fetch(dynamo, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
    await rm(dir, { recursive: true, force: true });
  }, 180_000);
});
