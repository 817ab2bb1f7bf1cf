import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { SoakReport } from '../../../local/soak.ts';
import { ROOT } from '../../support/runtime.ts';

/**
 * The one-minute soak (`npm run soak -- --minutes 1`) on the local runtime, against this run's
 * emulators: steady memory, open aggregates bounded by the load, zero loss, no result twice,
 * everything closed at the end. It is its own vitest project, outside `npm test`: run it with
 * `npm run test:soak` (CI does, `.ci/run`). The ten-minute version is `npm run soak` (on demand).
 */
describe('soak', () => {
  it('a minute of steady load loses nothing, emits each result once, and ends with nothing open', async () => {
    // Act
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
      const child = spawn('npm', ['run', 'soak', '--', '--minutes', process.env.FANIN_SOAK_MINUTES ?? '1'], {
        cwd: ROOT,
        env: process.env,
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      child.on('close', (exit) => resolve({ code: exit, stdout: out }));
    });

    // Assess
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as SoakReport;
    expect(report.failures).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicatedOutputs: 0, openAtEnd: 0, ok: true });
    expect(report.aggregatesSent).toBeGreaterThan(0);
    expect(report.completed).toBe(report.aggregatesSent);
    expect(code).toBe(0);
  }, 600_000);
});
