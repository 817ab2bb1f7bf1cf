import { describe, expect, it } from 'vitest';
import { endpoints } from '../../../../../local/cli/commands/endpoints.ts';
import type { Target } from '../../../../../shared/client/connect.ts';
import { args, capture, localWorld } from '../../world.ts';

/**
 * `fanin endpoints`' own fast test: where everything is, for the local runtime (its state file's
 * record, as --json) and for a stack (no state: what the CLI found). The integration test runs it
 * as a process against a running runtime.
 */
describe('fanin endpoints', () => {
  it('prints the runtime, its endpoint settings, dashboard, table, bucket and every queue URL', async () => {
    const world = await localWorld();
    const { io, out } = capture(world.target);

    await endpoints.run(io, args());

    expect(out[0]).toMatch(new RegExp(`^target\\s+local runtime \\(pid ${process.pid}\\)$`));
    expect(out.filter((l) => l.startsWith('AWS_'))).toEqual([
      expect.stringMatching(/^AWS_ENDPOINT_URL\s+http:\/\/127\.0\.0\.1:4566$/),
    ]);
    expect(out.some((l) => /^dashboard\s+http:\/\/127\.0\.0\.1:4780$/.test(l))).toBe(true);
    expect(out.some((l) => /^table\s+w-state$/.test(l))).toBe(true);
    for (const url of [...Object.values(world.provisioned.queueUrls), ...world.provisioned.replyQueueUrls])
      expect(out.some((l) => l.endsWith(` ${url}`))).toBe(true);
    expect(out.some((l) => /^w-desk-a\s+\S+w-desk-a$/.test(l))).toBe(true);
  });

  it('--json is the state file the runtime wrote', async () => {
    const world = await localWorld();
    const { io, json } = capture(world.target, true);

    await endpoints.run(io, args());

    expect(json[0]).toMatchObject({ version: 1, prefix: 'w', tableName: 'w-state', pid: process.pid });
  });

  it('describes a stack by its prefix, and --json by what the CLI found of it', async () => {
    const world = await localWorld();
    const { state: _state, ...rest } = world.target;
    const stack: Target = { ...rest, kind: 'stack', responderQueues: [] };
    const text = capture(stack);
    const json = capture(stack, true);

    await endpoints.run(text.io, args());
    await endpoints.run(json.io, args());

    expect(text.out[0]).toMatch(/^target\s+stack "w"$/);
    expect(text.out.some((l) => l.startsWith('dashboard'))).toBe(false);
    expect(json.json[0]).toMatchObject({ kind: 'stack', prefix: 'w', tableName: 'w-state' });
  });
});
