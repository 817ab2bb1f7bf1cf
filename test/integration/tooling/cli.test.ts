import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aws } from '../../support/clients.ts';
import { type Finished, ROOT, type RuntimeProcess, runCli, startRuntime } from '../../support/runtime.ts';

/**
 * The `fanin` CLI, as a user runs it (`node bin/fanin.js`, what `npx fanin` runs), against a local
 * runtime started once for this file (`local/main.ts` with fanin.config.ts under its own prefix, on
 * the test emulators). Commands run in order: each test consumes what it produced.
 */
const prefix = `cli-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
let runtime: RuntimeProcess;

beforeAll(async () => {
  runtime = await startRuntime({ prefix, args: ['--quiet'] });
}, 120_000);
afterAll(async () => {
  expect(await runtime.stop()).toBe(0);
}, 60_000);

const fanin = (...args: string[]): Promise<Finished> => runtime.cli(args);
const json = <T = Record<string, unknown>>(result: Finished): T => {
  expect(result.stderr).not.toMatch(/Error:/);
  return JSON.parse(result.stdout) as T;
};

describe('fanin CLI against the local runtime', () => {
  it('endpoints: the same facts as the state file, for people and for scripts', async () => {
    // Act
    const [human, machine] = await Promise.all([fanin('endpoints'), fanin('endpoints', '--json')]);

    // Assess
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`${prefix}-ingress`);
    expect(human.stdout).toContain(runtime.state.dashboardUrl ?? 'no dashboard');
    expect(machine.code).toBe(0);
    expect(json(machine)).toMatchObject({
      prefix,
      pid: runtime.state.pid,
      tableName: `${prefix}-state`,
      queues: { ingress: { url: runtime.state.queues.ingress.url } },
      replyPartitions: [{ name: `${prefix}-reply-0` }, { name: `${prefix}-reply-1` }],
    });
  });

  it('send, reply from a responder queue, show and tail: a loan quote at the threshold completes at once', async () => {
    // Act
    const sent = await fanin(
      'send',
      'loan-broker',
      '--payload',
      '{"amount":1000,"termYears":20}',
      '--aggregate-id',
      'cli-loan-1',
    );
    const replied = await fanin(
      'reply',
      '--from',
      'bank-3',
      '--body',
      '{"bank":"bank-3","rate":3.1,"term":20}',
      '--json',
    );
    const tailed = await fanin('tail', 'completed', '--consume', '--count', '1', '--timeout', '30', '--json');
    const shown = await fanin('show', 'cli-loan-1', '--json');

    // Assess
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('aggregate cli-loan-1');
    expect(json(replied)).toMatchObject({
      aggregateId: 'cli-loan-1',
      replyId: '2',
      subRequest: { amount: 1000 },
    });
    expect(tailed.code).toBe(0);
    const output = JSON.parse(tailed.stdout.trim()) as { output: string; body: Record<string, unknown> };
    expect(output).toMatchObject({
      output: 'completed',
      body: { aggregateId: 'cli-loan-1', type: 'fanin.aggregate.completed', result: { body: { rate: 3.1 } } },
    });
    expect(json(shown)).toMatchObject({
      aggregateId: 'cli-loan-1',
      status: 'closed',
      outcome: 'completed',
      received: 1,
    });
  });

  it('tail reads without deleting by default, --consume takes what it prints, --peek still works and says it is the default', async () => {
    // Prepare: one completed result on the (emptied) completed output
    await fanin('send', 'loan-broker', '--payload', '{"amount":2000}', '--aggregate-id', 'cli-tail-1');
    // (by its reply id: `--from bank-1` would answer an older aggregate's sub-request waiting there)
    await fanin(
      'reply',
      '--aggregate-id',
      'cli-tail-1',
      '--reply-id',
      '0',
      '--body',
      '{"bank":"bank-1","rate":3.0}',
    );
    const tail = (...more: string[]) =>
      fanin('tail', 'completed', '--count', '1', '--timeout', '30', '--json', ...more);

    // Act
    const first = await tail();
    const again = await tail();
    const peeked = await tail('--peek');
    const consumed = await tail('--consume');
    const after = await fanin('tail', 'completed');

    // Assess: the same message three times, then gone
    const line = (r: Finished) =>
      JSON.parse(r.stdout.trim()) as { messageId: string; sentAt: string; body: { aggregateId: string } };
    expect(first.code).toBe(0);
    expect(line(first).body.aggregateId).toBe('cli-tail-1');
    expect(line(first).sentAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    for (const r of [again, peeked, consumed]) expect(line(r).messageId).toBe(line(first).messageId);
    expect(first.stderr).not.toContain('deprecated');
    expect(peeked.stderr).toContain(
      'warning: --peek is deprecated: tail leaves the messages by default now (--consume deletes them)',
    );
    expect(after).toMatchObject({ code: 0, stdout: '' });
    expect(after.stderr).toContain(`${prefix}-out-completed.fifo is empty`);
    expect((await fanin('tail', 'completed', '--peek', '--consume')).code).toBe(2);
  }, 180_000);

  it('--json times: ISO 8601 beside each epoch field (openedAt, deadline, expiresAt in seconds)', async () => {
    // Act
    const shown = json<Record<string, unknown>>(await fanin('show', 'cli-tail-1', '--json'));

    // Assess: the numbers stay for scripts, the ISO form is beside them
    expect(typeof shown.openedAt).toBe('number');
    expect(shown.openedAtIso).toBe(new Date(shown.openedAt as number).toISOString());
    if (typeof shown.expiresAt === 'number') {
      expect(shown.expiresAtIso).toBe(new Date((shown.expiresAt as number) * 1000).toISOString());
    }
    expect(shown.expiresAt).toEqual(expect.any(Number));
  });

  it('send --wait shows progress and the outcome; list shows active aggregates; complete --wait ends one', async () => {
    // Prepare
    await fanin('send', 'order-approval', '--aggregate-id', 'cli-order-1', '--expected', '2');
    await fanin(
      'reply',
      '--aggregate-id',
      'cli-order-1',
      '--reply-id',
      '0',
      '--body',
      '{"approved":"alice"}',
    );

    // Act
    const listed = await fanin('list', '--json');
    const listedHuman = await fanin('list', '--definition', 'order-approval');
    const completed = await fanin('complete', '--aggregate-id', 'cli-order-1', '--wait', '--timeout', '30');
    const shown = await fanin('show', 'cli-order-1');

    // Assess
    expect(json<{ aggregateId: string; definition: string }[]>(listed)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ aggregateId: 'cli-order-1', definition: 'order-approval' }),
      ]),
    );
    expect(listedHuman.stdout).toMatch(/cli-order-1\s+order-approval\s+open\s+\d\/2/);
    expect(completed.code).toBe(0);
    expect(completed.stdout).toContain('cli-order-1: completed');
    expect(completed.stderr).toMatch(/complete.*1 closed/);
    expect(shown.stdout).toMatch(/status\s+closed \(completed\)/);
  });

  it('send --wait waits while its request has not opened the aggregate yet, then reports the outcome', async () => {
    // Act: the wait starts before the fan-out has written the aggregate; bank-2's quote (reply id
    // 1, the second bank) comes later and completes it (3.4 % is within the 3.5 % threshold).
    const [waited] = await Promise.all([
      fanin(
        'send',
        'loan-broker',
        '--payload',
        '{"amount":1000,"termYears":20}',
        '--aggregate-id',
        'cli-wait-1',
        '--wait',
        '--timeout',
        '30',
      ),
      (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return fanin(
          'reply',
          '--aggregate-id',
          'cli-wait-1',
          '--reply-id',
          '1',
          '--body',
          '{"bank":"bank-2","rate":3.4,"term":20}',
        );
      })(),
    ]);

    // Assess
    expect({ code: waited.code, stderr: waited.stderr }).toEqual({
      code: 0,
      stderr: expect.not.stringMatching(/not opened yet/),
    });
    expect(waited.stdout).toContain('cli-wait-1 completed: 1/5 replies');
  });

  it('send refuses an aggregate id that is taken and names the error output; complete refuses one never opened', async () => {
    // Act: cli-loan-1 closed in an earlier test; never-sent was never opened.
    const again = await fanin(
      'send',
      'loan-broker',
      '--payload',
      '{"amount":1000,"termYears":20}',
      '--aggregate-id',
      'cli-loan-1',
    );
    const never = await fanin('complete', '--aggregate-id', 'never-sent', '--wait', '--timeout', '5');

    // Assess
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('aggregate id "cli-loan-1" is taken (closed, completed');
    expect(again.stderr).toContain(`${prefix}-out-error.fifo`);
    expect(never.code).toBe(1);
    expect(never.stderr).toContain('no aggregate "never-sent": it was never opened');
  });

  it('complete with an external event completes the aggregate it names; one naming none is refused unless the definition opts in', async () => {
    // Prepare
    await fanin('send', 'order-approval', '--aggregate-id', 'cli-order-2');
    await fanin('send', 'order-approval', '--aggregate-id', 'cli-order-3');
    const event = ['complete', '--source', 'example.orders', '--detail-type', 'OrderApproved'];

    // Act
    const named = await fanin(...event, '--detail', '{"aggregateId":"cli-order-2"}', '--wait', '--json');
    const unnamed = await fanin(...event, '--wait');
    const other = await fanin('show', 'cli-order-3', '--json');

    // Assess
    expect(named.code).toBe(0);
    const body = json<{ closed: { aggregateId: string; outcome: string }[]; open: string[] }>(named);
    expect(body.closed).toEqual([{ aggregateId: 'cli-order-2', outcome: 'completed' }]);
    expect(body.open).toEqual([]);
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('definition "order-approval" is not completed whole by an event');
    expect(json(other)).toMatchObject({ aggregateId: 'cli-order-3', status: 'open' });
  });

  it('purge --wait ends an aggregate without a result; the status output tells', async () => {
    // Prepare
    await fanin('send', 'order-approval', '--aggregate-id', 'cli-order-4');

    // Act
    const purged = await fanin('purge', '--aggregate-id', 'cli-order-4', '--wait', '--json');
    const status = await fanin('tail', 'status', '--consume', '--json');

    // Assess
    expect(json(purged)).toMatchObject({
      closed: [{ aggregateId: 'cli-order-4', outcome: 'purged' }],
      open: [],
    });
    const types = status.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { body: { type: string; aggregateId?: string } }).body);
    expect(types).toContainEqual(
      expect.objectContaining({ type: 'fanin.aggregate.purged', aggregateId: 'cli-order-4' }),
    );
  });

  it('reply --definition publishes a self-starting message (an auction bid): the first bid opens the auction', async () => {
    // Act
    const bid = await fanin(
      'reply',
      '--definition',
      'auction',
      '--body',
      '{"auctionId":"cli-lot","bidId":"b1","bidder":"cli","price":42}',
      '--json',
    );
    const shown = await fanin('show', 'auction:cli-lot', '--json');

    // Assess
    expect(bid.code).toBe(0);
    expect(json<{ partition: number }>(bid).partition).toBeGreaterThanOrEqual(0);
    expect(json(shown)).toMatchObject({ definition: 'auction', received: 1 });
  });

  it('partitions, disable and enable: availability follows the operator', async () => {
    // Act
    const before = json<{ partitions: { index: number; enabled: boolean }[]; watermarks: object }>(
      await fanin('partitions', '--json'),
    );
    const disabled = await fanin('disable', '1', '--json');
    const during = await fanin('partitions');
    const enabled = await fanin('enable', '1');

    // Assess
    expect(before.watermarks).toEqual({
      low: 20,
      high: 100,
      highThreshold: 10_000,
      stallSeconds: 60,
      source: 'the local runtime',
    });
    expect(before.partitions.map((p) => p.enabled)).toEqual([true, true]);
    expect(json(disabled)).toMatchObject({
      index: 1,
      enabled: false,
      available: false,
      reason: 'send-disabled',
    });
    expect(during.stdout).toMatch(/1 .*reply-1 .* no\s+no \(send-disabled\)/);
    expect(enabled.code).toBe(0);
    expect(enabled.stdout).toContain('is enabled; available: yes');
  });

  it('redrive moves a DLQ back to its queue with a progress display', async () => {
    // Prepare: three replies to aggregates that do not exist, dead-lettered
    const dlqUrl = runtime.state.replyPartitions[1]?.dlqUrl ?? '';
    for (const n of [1, 2, 3]) {
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: JSON.stringify({ n }),
          MessageAttributes: {
            'fanin-aggregate-id': { DataType: 'String', StringValue: `cli-ghost-${n}` },
            'fanin-reply-id': { DataType: 'String', StringValue: '0' },
          },
        }),
      );
    }

    // Act
    const redriven = await fanin('redrive', 'reply-1', '--json');
    const unknown = await fanin('tail', 'unknown', '--consume', '--count', '3', '--timeout', '30', '--json');

    // Assess
    expect(json(redriven)).toEqual({ queue: `${prefix}-reply-1`, dlq: `${prefix}-reply-1-dlq`, moved: 3 });
    expect(redriven.stderr).toMatch(/redrive .*reply-1-dlq -> .*reply-1 .*3\/3/);
    const ids = unknown.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { body: { aggregateId: string } }).body.aggregateId);
    expect(ids.sort()).toEqual(['cli-ghost-1', 'cli-ghost-2', 'cli-ghost-3']);
  });

  it('set-parameters applies runtime parameters, and --reset restores the definition’s', async () => {
    // Act
    const set = await fanin('set-parameters', 'loan-broker', '--threshold', '3.1', '--timeout-seconds', '20');
    const reset = await fanin('set-parameters', 'loan-broker', '--reset', '--json');

    // Assess
    expect(set.code).toBe(0);
    expect(set.stdout).toContain('applied');
    expect(json(reset)).toMatchObject({ definition: 'loan-broker', parameters: {}, applied: true });
  });

  it('works against a deployed stack by prefix (--stack), resolving names through the SDK', async () => {
    // Act: the worker's environment points the SDK at the emulators, as a profile would at AWS
    const [after, before] = await Promise.all([
      runCli(['partitions', '--stack', prefix, '--json']),
      // Global options before the command, as `npx fanin --stack fanin list` in the README.
      runCli(['--stack', prefix, '--json', 'partitions']),
    ]);
    const missing = await runCli(['list', '--stack', 'no-such-stack']);

    // Assess
    for (const result of [after, before]) {
      expect(result.code).toBe(0);
      expect(json<{ partitions: { name: string }[] }>(result).partitions.map((p) => p.name)).toEqual([
        `${prefix}-reply-0`,
        `${prefix}-reply-1`,
      ]);
    }
    expect(missing.code).toBe(1);
    // Every missing queue is named, in the topology's order, whichever lookup answered first;
    // the backlog queue is optional (older stacks have none) and is not reported.
    expect(missing.stderr).toMatch(
      /queues no-such-stack-ingress, no-such-stack-control, no-such-stack-timer, no-such-stack-out-\S+.* not found: is a fanin stack with prefix "no-such-stack" deployed/,
    );
    expect(missing.stderr).not.toContain('no-such-stack-backlog');
  });

  it('fails with a clear message and a non-zero exit code', async () => {
    // Prepare
    const empty = await mkdtemp(join(tmpdir(), 'fanin-none-'));
    // The state file of a runtime killed without its shutdown: this one's, with a pid that has exited.
    const exited = spawnSync(process.execPath, ['-e', '']).pid;
    const stale = join(empty, 'stale.json');
    await writeFile(stale, JSON.stringify({ ...runtime.state, pid: exited }));

    // Act (a few at a time: each is a Node process loading the AWS SDK)
    const calls: (() => Promise<Finished>)[] = [
      () => fanin('frobnicate'),
      () => fanin('lsit'),
      () => fanin('list', '--definitoin', 'loan-broker'),
      () => fanin('list', 'extra'),
      () => fanin('send'),
      () => fanin('send', 'no-such-definition'),
      () => fanin('send', 'auction'),
      () => fanin('show', 'no-such-aggregate'),
      () => fanin('purge'),
      () => fanin('enable', '9'),
      () => fanin('tail', 'nowhere'),
      () => fanin('tail', 'late', '--count', '1', '--timeout', '1'),
      () => fanin('reply', '--from', 'bank-4', '--body', '{not json'),
      () => fanin('reply', '--from', 'no-such-queue', '--body', '{}'),
      () => runCli(['list'], { env: { ...process.env, FANIN_STATE: join(empty, 'runtime.json') } }),
      () => runCli(['list'], { env: { ...process.env, FANIN_STATE: stale } }),
    ];
    const results: Finished[] = [];
    for (let i = 0; i < calls.length; i += 3) {
      results.push(...(await Promise.all(calls.slice(i, i + 3).map((call) => call()))));
    }
    await rm(empty, { recursive: true, force: true });

    // Assess
    const [
      unknown,
      mistyped,
      mistypedOption,
      excess,
      noDefinition,
      badDefinition,
      selfStarting,
      noAggregate,
      noTarget,
      badPartition,
      badOutput,
      tailTimeout,
      badJson,
      badQueue,
      noRuntime,
      deadRuntime,
    ] = results.map((r) => ({ code: r?.code, stderr: r?.stderr ?? '' }));
    expect(unknown).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("unknown command 'frobnicate'"),
    });
    expect(mistyped).toMatchObject({ code: 2, stderr: expect.stringContaining('(Did you mean list?)') });
    expect(mistypedOption).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('(Did you mean --definition?)'),
    });
    expect(excess).toMatchObject({ code: 2, stderr: expect.stringContaining('too many arguments') });
    expect(noDefinition).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("missing required argument 'definition'"),
    });
    expect(badDefinition).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('unknown definition "no-such-definition"'),
    });
    expect(selfStarting).toMatchObject({ code: 1, stderr: expect.stringContaining('is self-starting') });
    expect(noAggregate).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('no aggregate "no-such-aggregate"'),
    });
    expect(noTarget).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('exactly one of --aggregate-id'),
    });
    expect(badPartition).toMatchObject({ code: 1, stderr: expect.stringContaining('has no partition 9') });
    expect(badOutput).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'Allowed choices are completed, timed-out, unknown, late, error, status',
      ),
    });
    expect(tailTimeout).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('0 of 1 message(s) arrived'),
    });
    expect(badJson).toMatchObject({ code: 2, stderr: expect.stringContaining('--body is not valid JSON') });
    expect(badQueue).toMatchObject({ code: 1, stderr: expect.stringContaining('no queue "no-such-queue"') });
    expect(noRuntime).toMatchObject({ code: 1, stderr: expect.stringContaining('no local runtime') });
    expect(noRuntime?.stderr).toContain('--state or FANIN_STATE');
    expect(deadRuntime).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        `the local runtime recorded in ${stale} (pid ${exited}) is not running`,
      ),
    });
    expect(deadRuntime?.stderr).not.toContain('ECONNREFUSED');
  }, 180_000);

  it('every command has --help and `fanin help <command>`, listing its own and the global options', async () => {
    // Prepare
    const overview = await fanin('--help');
    const names = [...overview.stdout.matchAll(/^ {2}([a-z][a-z-]*) [[<a-z ]/gm)]
      .map((m) => m[1] ?? '')
      .filter((name) => name !== 'help');

    // Act
    const helps: Finished[] = [];
    for (let i = 0; i < names.length; i += 3) {
      helps.push(...(await Promise.all(names.slice(i, i + 3).map((name) => fanin(name, '--help')))));
    }
    const [helpCommand, tailHelp] = await Promise.all([fanin('help', 'tail'), fanin('tail', '--help')]);

    // Assess
    expect(overview.code).toBe(0);
    expect(names).toEqual([
      'send',
      'reply',
      'show',
      'history',
      'list',
      'purge',
      'complete',
      'set-parameters',
      'partitions',
      'enable',
      'disable',
      'evacuate',
      'tail',
      'redrive',
      'endpoints',
      'completion',
    ]);
    helps.forEach((help, i) => {
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: fanin ${names[i]}`);
      expect(help.stdout).toMatch(/Global Options:[\s\S]*--json[\s\S]*--stack <prefix>/);
    });
    expect(helpCommand).toEqual(tailHelp);
  }, 180_000);

  it('completion bash prints a script that completes commands, options and the outputs of tail', async () => {
    // Act
    const [bash, zsh, fish] = await Promise.all([
      fanin('completion', 'bash'),
      fanin('completion', 'zsh'),
      fanin('completion', 'fish'),
    ]);
    const dir = await mkdtemp(join(tmpdir(), 'fanin-completion-'));
    const script = join(dir, 'fanin.bash');
    await writeFile(script, bash.stdout);
    // What bash does on <Tab>: the words so far in COMP_WORDS, the one being completed at COMP_CWORD.
    const complete = (...words: string[]) =>
      spawnSync(
        'bash',
        [
          '-c',
          // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash expansion, not a template
          'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fanin; echo "${COMPREPLY[*]}"',
          script,
          ...words,
        ],
        { encoding: 'utf8' },
      ).stdout.trim();

    // Assess
    expect(bash.code).toBe(0);
    expect(bash.stdout).toContain('complete -F _fanin fanin');
    expect(complete('fanin', 'ta')).toBe('tail');
    expect(complete('fanin', '--stack', 'shop', 'tail', 'c')).toBe('completed');
    expect(complete('fanin', 'tail', 'completed', '--co')).toBe('--count --consume');
    expect(complete('fanin', 'send', '--aggregate-id', 'x', '--pay')).toBe('--payload');
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain('bashcompinit');
    expect(zsh.stdout).toContain('complete -F _fanin fanin');
    expect(fish.code).toBe(2);
    expect(fish.stderr).toContain(
      "value 'fish' is invalid for argument 'shell'. Allowed choices are bash, zsh.",
    );
  });

  it('--stack without a region says how to set one', async () => {
    // Prepare: a shell with no region anywhere (no AWS_REGION, no profile with one)
    const env: NodeJS.ProcessEnv = { ...process.env, AWS_CONFIG_FILE: join(ROOT, 'no-such-aws-config') };
    for (const name of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'FANIN_STATE']) delete env[name];

    // Act
    const listed = await runCli(['--stack', 'shop', 'list'], { env });

    // Assess
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain(
      'fanin list: --stack shop: no AWS region is set. Set one with AWS_REGION',
    );
    expect(listed.stderr).not.toContain('Region is missing');
  });

  it('--version prints the package version; no command prints the overview as a usage error', async () => {
    // Act
    const [version, short, nothing] = await Promise.all([fanin('--version'), fanin('-V'), fanin()]);

    // Assess
    const { version: expected } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toEqual({ code: 0, stdout: `${expected}\n`, stderr: '' });
    expect(short).toEqual(version);
    expect(nothing.code).toBe(2);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toContain('Usage: fanin [options] [command]');
  });
});
