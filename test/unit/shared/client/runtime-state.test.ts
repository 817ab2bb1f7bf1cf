import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_STATE_FILE,
  processAlive,
  readState,
  stateFilePath,
} from '../../../../shared/client/runtime-state.ts';

/**
 * The local runtime's state file as its readers find it: the path from `--state`, else
 * `FANIN_STATE`, else `.fanin/runtime.json`; no file is no runtime; an unknown version is refused;
 * a recorded process is alive or not. Local I/O in a temporary directory only.
 */

describe('stateFilePath', () => {
  it('takes the explicit path, else FANIN_STATE, else the default, against the working directory', () => {
    // Act / Assess
    expect(stateFilePath('/w', 'x/state.json', { FANIN_STATE: 'env.json' })).toBe(
      resolve('/w', 'x/state.json'),
    );
    expect(stateFilePath('/w', undefined, { FANIN_STATE: 'env.json' })).toBe(resolve('/w', 'env.json'));
    expect(stateFilePath('/w', undefined, {})).toBe(resolve('/w', DEFAULT_STATE_FILE));
    expect(DEFAULT_STATE_FILE).toBe('.fanin/runtime.json');
  });
});

describe('readState', () => {
  it('reads a state file of version 1, and answers undefined when there is none', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'fanin-state-'));
    const file = join(dir, 'runtime.json');
    await writeFile(file, JSON.stringify({ version: 1, pid: 42, prefix: 'dev' }));

    // Act
    const state = await readState(file);
    const none = await readState(join(dir, 'absent.json'));

    // Assess
    expect(state).toMatchObject({ version: 1, pid: 42, prefix: 'dev' });
    expect(none).toBeUndefined();
  });

  it('refuses a state file of an unknown version, naming it, and one it cannot read', async () => {
    // Prepare
    const dir = await mkdtemp(join(tmpdir(), 'fanin-state-'));
    const file = join(dir, 'runtime.json');
    await writeFile(file, JSON.stringify({ version: 2 }));
    const folder = join(dir, 'a-folder');
    await mkdir(folder);

    // Act / Assess
    await expect(readState(file)).rejects.toThrow(`${file} has an unknown version (2)`);
    await expect(readState(folder)).rejects.toThrow();
  });
});

describe('processAlive', () => {
  it('is true for this process and false for a process id no process has', () => {
    // Act / Assess
    expect(processAlive(process.pid)).toBe(true);
    expect(processAlive(2 ** 30)).toBe(false);
  });
});
