import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoStateStore } from '../../../shared/adapters/dynamo-state-store.ts';
import { WireAttribute } from '../../../shared/engine/correlation.ts';
import { aws } from '../../support/clients.ts';
import { type Finished, type RuntimeProcess, runCli, startRuntime } from '../../support/runtime.ts';

/**
 * `fanin history` as a user runs it, against a runtime started for this file on its own
 * configuration (the real handlers on the test emulators): the timeline of an aggregate that
 * completed with a late reply after its close, of one that opened on a held reply, of one whose
 * inactivity timeout moved its deadline, as text and as JSON, locally and with `--stack`.
 */
const prefix = `hist-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
let dir: string;
let runtime: RuntimeProcess;
let store: DynamoStateStore;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fanin-history-'));
  const config = join(dir, 'fanin.config.json');
  await writeFile(
    config,
    JSON.stringify({
      replyPartitions: 2,
      definitions: [
        {
          name: 'quotes',
          fanOut: {
            type: 'recipient-list',
            recipients: ['{prefix}-desk-a', '{prefix}-desk-b', '{prefix}-desk-c'],
          },
          completion: { strategy: 'count', count: 2 },
          timeoutSeconds: 3600,
        },
        {
          name: 'tally',
          fanOut: { type: 'none' },
          completion: { strategy: 'all' },
          timeoutSeconds: 600,
          unknownTimeoutSeconds: 600,
        },
        {
          name: 'idle',
          fanOut: { type: 'none' },
          completion: { strategy: 'timeout' },
          timeoutSeconds: 600,
          inactivityTimeoutSeconds: 10,
        },
      ],
      responderQueues: ['desk-a', 'desk-b', 'desk-c'],
    }),
  );
  runtime = await startRuntime({ prefix, args: ['--config', config, '--no-dashboard'] });
  store = new DynamoStateStore({
    client: aws.dynamo,
    tableName: runtime.state.tableName,
  });
}, 120_000);
afterAll(async () => {
  if (runtime) expect(await runtime.stop()).toBe(0);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

const fanin = (...args: string[]): Promise<Finished> => runtime.cli(args);
/** Each test runs several CLI processes, seconds each on a loaded machine. */
const TEST_TIMEOUT_MS = 240_000;

interface Event {
  kind: string;
  occurredAt?: number;
  occurredAtIso?: string;
  text: string;
  replyId?: string;
  [field: string]: unknown;
}
interface HistoryJson {
  aggregateId: string;
  status: string;
  outcome?: string;
  completedBy?: string;
  replies: number;
  late: number;
  expiresAt?: number;
  expiresAtIso?: string;
  events: Event[];
  cannotTell: string[];
}

async function historyJson(aggregateId: string, extra: readonly string[] = []): Promise<HistoryJson> {
  const result = await fanin('history', aggregateId, '--json', ...extra);
  expect(result.stderr).not.toMatch(/Error:/);
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as HistoryJson;
}

/** Polls the state table (fast: no CLI process) until `test` holds of the aggregate's header. */
async function untilHeader(
  aggregateId: string,
  test: (status: string | undefined) => boolean,
  timeoutMs = 30_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const header = await store.getHeader(aggregateId);
    if (test(header?.status)) return;
    if (Date.now() > until) throw new Error(`aggregate ${aggregateId} is ${header?.status ?? 'absent'}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function untilLate(aggregateId: string, replyId: string, timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const records = await store.readHistory(aggregateId);
    if (records.marks.some((m) => m.replyId === replyId)) return;
    if (Date.now() > until) throw new Error(`reply ${replyId} of ${aggregateId} was never marked late`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('fanin history', () => {
  it(
    'tells a completed aggregate: its request, parameters, recipients, replies, seal, result, close and a reply late after the close',
    async () => {
      // Arrange: three desks asked; two answers complete it (count 2), the third comes after the close.
      expect(
        (
          await fanin(
            'send',
            'quotes',
            '--payload',
            '{"item":"bolts"}',
            '--aggregate-id',
            'h-quotes',
            '--request-id',
            'req-h-1',
          )
        ).code,
      ).toBe(0);
      expect((await fanin('reply', '--from', 'desk-a', '--body', '{"price":7}')).code).toBe(0);
      expect((await fanin('reply', '--from', 'desk-c', '--body', '{"price":5}')).code).toBe(0);
      await untilHeader('h-quotes', (status) => status === 'closed');
      expect((await fanin('reply', '--from', 'desk-b', '--body', '{"price":6}')).code).toBe(0);
      await untilLate('h-quotes', '1');

      // Act
      const [text, history] = await Promise.all([fanin('history', 'h-quotes'), historyJson('h-quotes')]);

      // Assess: the text, line by line in order
      expect(text.code).toBe(0);
      const lines = text.stdout.trim().split('\n');
      expect(lines[0]).toMatch(
        /^aggregate h-quotes \(quotes\): closed \(completed by count\), 2 of 3 replies recorded, 1 late; history kept until \d{4}-/,
      );
      const order = [
        /opened\s+opened by request req-h-1: definition quotes, parameters \{[^}]*"count":2[^}]*\}, expecting 3 replies/,
        new RegExp(
          `asked\\s+sub-requests sent: 0 → ${prefix}-desk-a, 1 → ${prefix}-desk-b, 2 → ${prefix}-desk-c`,
        ),
        new RegExp(`reply\\s+reply 0 from ${prefix}-desk-a recorded \\(message [^)]+\\) — a member`),
        new RegExp(`reply\\s+reply 2 from ${prefix}-desk-c recorded \\(message [^)]+\\) — a member`),
        /sealed\s+sealed completed by count with 2 members \[\[0,0\],\[2,2\]\]/,
        /published\s+result h-quotes\/result published on the completed output \(its queue\)/,
        /closed\s+closed: the header is its tombstone, kept until \d{4}-/,
        new RegExp(
          `late\\s+reply 1 from ${prefix}-desk-b late: late output h-quotes/late/1 published — it came after the seal`,
        ),
        /^what the stored items cannot tell:$/,
      ];
      let at = 0;
      for (const pattern of order) {
        const found = lines.findIndex((line, i) => i > at && pattern.test(line));
        expect(found, `${pattern} after line ${at}:\n${text.stdout}`).toBeGreaterThan(at);
        at = found;
      }
      // Each timed line starts with its ISO time and its offset from the open.
      expect(lines.find((l) => l.includes(' opened by request'))).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\s+\+0\.000s\s+opened/,
      );

      // Assess: the JSON, every time with its ISO 8601 beside it
      expect(history).toMatchObject({
        aggregateId: 'h-quotes',
        status: 'closed',
        outcome: 'completed',
        completedBy: 'count',
        replies: 2,
        late: 1,
      });
      expect(history.expiresAtIso).toBe(new Date((history.expiresAt as number) * 1000).toISOString());
      expect(history.events.map((e) => e.kind)).toEqual([
        'opened',
        'asked',
        'reply',
        'reply',
        'sealed',
        'published',
        'closed',
        'late',
      ]);
      for (const event of history.events.filter((e) => e.occurredAt !== undefined)) {
        expect(event.occurredAtIso).toBe(new Date(event.occurredAt as number).toISOString());
      }
      const opened = history.events[0] as Event;
      expect(opened).toMatchObject({ requestId: 'req-h-1', definition: 'quotes', expected: 3 });
      expect(opened.params).toEqual({ timeoutSeconds: 3600, count: 2 });
      expect(opened.deadlineIso).toBe(new Date(opened.deadline as number).toISOString());
      expect(history.events.find((e) => e.kind === 'sealed')).toMatchObject({
        outcome: 'completed',
        completedBy: 'count',
        members: 2,
        memberSet: '[[0,0],[2,2]]',
      });
      expect(history.events.find((e) => e.kind === 'published')?.output).toEqual({
        id: 'h-quotes/result',
        to: 'completed',
        sent: true,
      });
      expect(history.events.find((e) => e.kind === 'late')).toMatchObject({
        replyId: '1',
        recipient: `${prefix}-desk-b`,
        output: { id: 'h-quotes/late/1', to: 'late', sent: true },
      });
      const replies = history.events.filter((e) => e.kind === 'reply');
      expect(replies.map((r) => [r.replyId, r.recipient, r.member, r.copies])).toEqual([
        ['0', `${prefix}-desk-a`, true, 1],
        ['2', `${prefix}-desk-c`, true, 1],
      ]);
      // Judged by the tombstone, the late reply was never recorded: no time, and the gap is said.
      expect(history.events.at(-1)?.occurredAt).toBeUndefined();
      expect(history.cannotTell.join('\n')).toContain('judged late by the sealed header or the tombstone');
      expect(history.cannotTell.length).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'with --stack reads the same items through the AWS settings and tells the same story',
    async () => {
      // Act
      const result = await runCli(['history', 'h-quotes', '--stack', prefix, '--json']);

      // Assess
      expect(result.code).toBe(0);
      const history = JSON.parse(result.stdout) as HistoryJson;
      expect(history.status).toBe('closed');
      const local = await historyJson('h-quotes');
      expect(history.events.map((e) => e.kind)).toEqual(local.events.map((e) => e.kind));
      // Without the runtime's definitions only the result's channels go unsaid.
      const texts = (h: HistoryJson) => h.events.filter((e) => e.kind !== 'published').map((e) => e.text);
      expect(texts(history)).toEqual(texts(local));
      expect(history.events.find((e) => e.kind === 'published')?.text).toContain(
        'result h-quotes/result published on the completed output',
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'tells a reply held before its aggregate opened, then counted at the open',
    async () => {
      // Arrange: the reply first; the history of an aggregate not opened yet shows it held.
      const reply = await fanin(
        'reply',
        '--aggregate-id',
        'h-tally',
        '--reply-id',
        'r-1',
        '--definition',
        'tally',
        '--body',
        '{"n":1}',
      );
      expect(reply.code).toBe(0);
      const until = Date.now() + 20_000;
      while ((await store.listHeld('h-tally')).length === 0 && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const before = await historyJson('h-tally');

      // Act: the request opens it; the held reply completes it
      expect((await fanin('send', 'tally', '--aggregate-id', 'h-tally', '--expected', '1')).code).toBe(0);
      await untilHeader('h-tally', (status) => status === 'closed');
      const after = await historyJson('h-tally');

      // Assess
      expect(before.status).toBe('not opened');
      expect(before.events).toEqual([expect.objectContaining({ kind: 'held', replyId: 'r-1' })]);
      expect(before.events[0]?.dueAtIso).toEqual(expect.any(String));
      const counted = after.events.find((e) => e.kind === 'reply');
      expect(counted).toMatchObject({ replyId: 'r-1', held: true, member: true });
      expect(counted?.text).toContain('held before its aggregate opened, counted at the open');
      expect(after.events.findIndex((e) => e.kind === 'reply')).toBeLessThan(
        after.events.findIndex((e) => e.kind === 'opened'),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'tells the deadline an inactivity timeout moved, and the timeout that ended it',
    async () => {
      // Arrange: a reply 4 s after the open keeps the aggregate open 4 s past its first deadline
      // (10 s after the open); a reply right after the open would move it by milliseconds only,
      // less than the timer's own lateness.
      expect((await fanin('send', 'idle', '--aggregate-id', 'h-idle')).code).toBe(0);
      await untilHeader('h-idle', (status) => status === 'open');
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      await aws.sqs.send(
        new SendMessageCommand({
          QueueUrl: runtime.state.replyPartitions[0]?.url,
          MessageBody: JSON.stringify({ n: 1 }),
          MessageAttributes: {
            [WireAttribute.AGGREGATE_ID]: { DataType: 'String', StringValue: 'h-idle' },
            [WireAttribute.REPLY_ID]: { DataType: 'String', StringValue: 'r-1' },
            [WireAttribute.DEFINITION]: { DataType: 'String', StringValue: 'idle' },
          },
        }),
      );
      await untilHeader('h-idle', (status) => status === 'closed', 90_000);

      // Act
      const [history, text] = await Promise.all([historyJson('h-idle'), fanin('history', 'h-idle')]);

      // Assess
      const moved = history.events.find((e) => e.kind === 'deadline-moved');
      expect(moved).toMatchObject({ moves: 1 });
      expect(moved?.firstDeadlineAtIso).toBe(new Date(moved?.firstDeadlineAt as number).toISOString());
      expect(moved?.deadline as number).toBeGreaterThan(moved?.firstDeadlineAt as number);
      expect(history.events.find((e) => e.kind === 'sealed')).toMatchObject({
        completedBy: 'deadline',
      });
      expect(text.stdout).toMatch(
        /deadline-moved\s+deadline moved 1 time by the inactivity timeout, from \d{4}-/,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'says clearly that an aggregate does not exist, in text and JSON, and exits 1',
    async () => {
      // Act
      const [text, json] = await Promise.all([
        fanin('history', 'h-never'),
        fanin('history', 'h-never', '--json'),
      ]);

      // Assess
      expect(text.code).toBe(1);
      expect(text.stderr).toContain(
        `fanin history: no aggregate "h-never" in table ${runtime.state.tableName}`,
      );
      expect(text.stderr).toContain('never opened, or its tombstone has expired');
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        aggregateId: 'h-never',
        status: 'not found',
        events: [],
      });
    },
    TEST_TIMEOUT_MS,
  );
});

describe('the state store read whole for a history', () => {
  it(
    'reads every copy across write shards and packs, late and unknown marks, and the kept parameters',
    async () => {
      // Arrange: an aggregate over two write shards (index ids 32-63 are shard 1's); replies 0 and
      // 1 in one batch, 0 again alone (a redelivery grouped differently), 32 failed; sealed and
      // closed; 40 late after the close; 7 reported unknown before it opened.
      const now = Date.now();
      const expiresAt = Math.floor(now / 1000) + 3600;
      const id = `h-store-${randomBytes(3).toString('hex')}`;
      expect(await store.markUnknown(id, '7', expiresAt, [2])).toBe(true);
      await store.openAggregate({
        aggregateId: id,
        definition: 'tally',
        status: 'open',
        expected: 3,
        received: 0,
        lateCount: 0,
        openedAt: now,
        deadline: now + 60_000,
        params: { timeoutSeconds: 60 },
        shards: 2,
      });
      const reply = (replyId: string, at: number, extra = {}) => ({
        replyId,
        payload: '{"secret":"never shown"}',
        receivedAt: at,
        expiresAt,
        messageId: `m-${replyId}`,
        ...extra,
      });
      await store.putReplies(id, [reply('0', now + 1), reply('1', now + 2)], 2);
      await store.putReply(id, reply('0', now + 3), 2);
      await store.putReply(id, reply('32', now + 4, { failure: 'out of stock' }), 2);
      expect(await store.moveDeadline(id, now + 60_000, now + 90_000)).toBe(true);
      await store.seal(id, {
        outcome: 'completed',
        completedBy: 'all-arrived',
        members: ['0', '1', '32'],
        at: now + 5,
        lease: 'lease-1',
        leaseUntil: now + 120_000,
      });
      expect(await store.close(id, 'lease-1', expiresAt)).toBe(true);
      expect(await store.markLate(id, '40', expiresAt, 2)).toBe('marked');

      // Act
      const records = await store.readHistory(id);

      // Assess: the items as stored, without a body
      expect(records.header).toMatchObject({ status: 'closed', shards: 2, params: {} });
      expect(records.kept).toEqual({
        params: { timeoutSeconds: 60 },
        firstDeadline: now + 60_000,
        deadlineMoves: 1,
      });
      const copies = records.copies.map((c) => [c.replyId, c.receivedAt, c.pack !== undefined]).sort();
      expect(copies).toEqual(
        [
          ['0', now + 1, true],
          ['0', now + 3, false],
          ['1', now + 2, true],
          ['32', now + 4, false],
        ].sort(),
      );
      expect(records.copies.find((c) => c.replyId === '32')?.failure).toBe('out of stock');
      expect(JSON.stringify(records)).not.toContain('never shown');
      expect(records.marks).toEqual(
        expect.arrayContaining([{ replyId: '40' }, { replyId: '7', owes: 'unknown' }]),
      );
    },
    TEST_TIMEOUT_MS,
  );
});
