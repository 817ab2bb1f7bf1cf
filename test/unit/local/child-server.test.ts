import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findOnPath, isExecutable, once } from '../../../local/child-server.ts';

/**
 * The helpers of the emulators' child processes that need no process of their own: finding a
 * command on a PATH (temporary files stand for the commands) and running a stop once. Starting a
 * child server, and `httpStatus`, need a process and a socket: the runtime's integration tests
 * start the emulators through them.
 */

async function dirWith(files: Record<string, number>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'fanin-path-'));
  for (const [name, mode] of Object.entries(files)) {
    await writeFile(join(dir, name), '#!/bin/sh\n');
    await chmod(join(dir, name), mode);
  }
  return dir;
}

describe('findOnPath', () => {
  it('finds the first executable of that name along the PATH, skipping one that may not be run', async () => {
    const first = await dirWith({ java: 0o644 });
    const second = await dirWith({ java: 0o755 });
    const third = await dirWith({ java: 0o755 });

    expect(await findOnPath('java', { PATH: ['', first, second, third].join(delimiter) })).toBe(
      join(second, 'java'),
    );
  });

  it('finds nothing without a PATH or when no directory has it', async () => {
    expect(await findOnPath('java', {})).toBeUndefined();
    expect(await findOnPath('java', { PATH: await dirWith({ other: 0o755 }) })).toBeUndefined();
  });
});

describe('isExecutable', () => {
  it('is true for an executable file, false for another or a missing one', async () => {
    const dir = await dirWith({ run: 0o755, read: 0o644 });
    expect(await isExecutable(join(dir, 'run'))).toBe(true);
    expect(await isExecutable(join(dir, 'read'))).toBe(false);
    expect(await isExecutable(join(dir, 'none'))).toBe(false);
  });
});

describe('once', () => {
  it('runs the function on the first call only; later calls get the same promise', async () => {
    let runs = 0;
    const stop = once(async () => {
      runs += 1;
    });

    const first = stop();
    const second = stop();
    await Promise.all([first, second]);

    expect(second).toBe(first);
    expect(runs).toBe(1);
  });
});
