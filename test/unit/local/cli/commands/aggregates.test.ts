import { ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  deadlineText,
  fatesTable,
  list,
  reply,
  send,
  show,
} from '../../../../../local/cli/commands/aggregates.ts';
import { CommandError, UsageError } from '../../../../../local/cli/io.ts';
import { args, capture, DEFINITIONS, type LocalWorld, localWorld } from '../../world.ts';

/**
 * The aggregate commands' own fast test: `send`, `reply`, `show` and `list` run against a local
 * runtime in memory (the topology provisioned over the simulation's models, the production handlers
 * delivering when the test says). test/integration/tooling/cli.test.ts runs the same commands as
 * processes against the emulators; this pins their validation, texts and --json documents.
 */

let world: LocalWorld;
beforeEach(async () => {
  world = await localWorld();
});

async function opened(aggregateId: string, definition = 'quotes'): Promise<void> {
  await send.run(capture(world.target).io, args({ 'aggregate-id': aggregateId }, definition));
  await world.deliver('ingress');
}

describe('fanin send', () => {
  it('sends the request to the ingress queue and prints the aggregate id it opens', async () => {
    const { io, out } = capture(world.target);

    const code = await send.run(io, args({ 'aggregate-id': 'q-1', 'request-id': 'r-1' }, 'quotes'));

    expect(code).toBe(0);
    expect(out).toEqual(['sent request r-1 to w-ingress: aggregate q-1']);
    expect(await world.deliver('ingress')).toBe(1);
    expect((await world.context().store.getHeader('q-1'))?.definition).toBe('quotes');
  });

  it('names the aggregate <definition>-<random> when no id is given', async () => {
    const { io, json } = capture(world.target, true);

    await send.run(io, args({}, 'quotes'));

    expect((json[0] as { aggregateId: string }).aggregateId).toMatch(/^quotes-[0-9a-f]{8}$/);
  });

  it('puts --payload and --recipients on the --body it sends: each recipient gets the payload', async () => {
    await send.run(
      capture(world.target).io,
      args(
        {
          body: '{"note":"kept"}',
          payload: '{"n":1}',
          recipients: 'w-desk-a,w-desk-b',
          'aggregate-id': 's-1',
        },
        'survey',
      ),
    );
    await world.deliver('ingress');

    expect((await world.context().store.getHeader('s-1'))?.expected).toBe(2);
    const answering = capture(world.target, true);
    await reply.run(answering.io, args({ from: 'desk-b', body: '{}' }));
    expect(answering.json[0]).toMatchObject({ aggregateId: 's-1', subRequest: { n: 1 } });
  });

  it('puts --expected on the body of a request that fans out to nobody', async () => {
    await send.run(capture(world.target).io, args({ expected: '3', 'aggregate-id': 'o-1' }, 'orders'));
    await world.deliver('ingress');

    expect((await world.context().store.getHeader('o-1'))?.expected).toBe(3);
  });

  it.each([
    [{ body: '[1]' }, '--body must be a JSON object'],
    [{ body: '{' }, '--body is not valid JSON'],
    [{ expected: '-1' }, '--expected must be an integer from 0'],
    [{ timeout: 'soon' }, '--timeout must be a number'],
  ])('refuses %o as a usage error', async (values, message) => {
    const run = send.run(capture(world.target).io, args(values, 'quotes'));

    await expect(run).rejects.toBeInstanceOf(UsageError);
    await expect(run).rejects.toThrow(message);
  });

  it('refuses a definition the runtime does not have, naming those it has', async () => {
    await expect(send.run(capture(world.target).io, args({}, 'nope'))).rejects.toThrow(
      'unknown definition "nope" (this runtime has quotes, orders, survey, auction)',
    );
  });

  it('refuses a self-starting definition and says how to publish its first message', async () => {
    await expect(send.run(capture(world.target).io, args({}, 'auction'))).rejects.toThrow(
      'fanin reply --definition auction --body <json>',
    );
  });

  it('refuses an aggregate id already taken before anything is sent (exit 1)', async () => {
    await opened('q-2');
    const run = send.run(capture(world.target).io, args({ 'aggregate-id': 'q-2' }, 'quotes'));

    await expect(run).rejects.toBeInstanceOf(CommandError);
    await expect(run).rejects.toThrow('aggregate id "q-2" is taken (open');
    expect(await world.deliver('ingress')).toBe(0);
  });

  it('--wait ends with the reason fanin gave on the error output when it refused the request', async () => {
    const { io } = capture(world.target);
    const sending = send.run(
      io,
      args({ 'aggregate-id': 'q-3', recipients: 'w-nowhere', wait: true, timeout: '10' }, 'survey'),
    );
    setTimeout(() => void world.deliver('ingress'), 50);

    await expect(sending).rejects.toThrow(
      /request .* \(aggregate q-3\) was refused to w-out-error\.fifo: .*w-nowhere.*does not exist/,
    );
  });

  it('--wait prints the outcome once the aggregate closed', async () => {
    const { io, out } = capture(world.target);
    const sending = send.run(io, args({ 'aggregate-id': 'q-7', wait: true, timeout: '20' }, 'quotes'));
    setTimeout(async () => {
      await world.deliver('ingress');
      for (const from of ['desk-a', 'desk-b'])
        await reply.run(capture(world.target).io, args({ from, body: '{}' }));
      for (let round = 0; round < 5; round += 1)
        for (const q of ['reply-0', 'reply-1', 'timer'] as const) await world.deliver(q);
    }, 50);

    expect(await sending).toBe(0);
    expect(out[0]).toMatch(/^sent request \S+: aggregate q-7$/);
    expect(out.at(-1)).toBe(
      'q-7 completed: 2/2 replies (the result is on w-out-completed.fifo or w-out-timed-out.fifo: fanin tail completed)',
    );
  });
});

describe('fanin reply', () => {
  it('needs --body and one of --from, --aggregate-id or --definition', async () => {
    await expect(reply.run(capture(world.target).io, args({ from: 'desk-a' }))).rejects.toThrow(
      'reply needs --body <json>',
    );
    await expect(reply.run(capture(world.target).io, args({ body: '{}' }))).rejects.toThrow(
      'reply needs --from <queue>, --aggregate-id <id> or --definition <name>',
    );
  });

  it('--from answers the next sub-request on a responder queue, which fanin then records', async () => {
    await opened('q-4');
    const { io, json } = capture(world.target, true);

    await reply.run(io, args({ from: 'desk-a', body: '{"rate":3}' }));

    expect(json[0]).toMatchObject({ aggregateId: 'q-4', replyId: '0' });
    for (const q of ['reply-0', 'reply-1'] as const) await world.deliver(q);
    const snapshot = await world.context().store.readAggregate('q-4');
    expect(snapshot.replies.map((r) => r.replyId)).toEqual(['0']);
  });

  it('--from fails with exit 1 when no sub-request comes within --wait-for', async () => {
    await expect(
      reply.run(capture(world.target).io, args({ from: 'desk-b', body: '{}', 'wait-for': '0' })),
    ).rejects.toThrow('no sub-request waiting on w-desk-b');
  });

  it('--partition sends to that partition, and names the partitions there are when it is not one', async () => {
    const { io, out } = capture(world.target);

    await reply.run(io, args({ 'aggregate-id': 'x', body: '{}', partition: '1' }));

    expect(out).toEqual(['sent reply to w-reply-1']);
    await expect(
      reply.run(capture(world.target).io, args({ 'aggregate-id': 'x', body: '{}', partition: '2' })),
    ).rejects.toThrow('no reply partition 2 (there are 2: 0-1)');
  });

  it('publishes a self-starting message with --definition alone, which opens its aggregate', async () => {
    const { io, json } = capture(world.target, true);

    await reply.run(io, args({ definition: 'auction', body: '{"auctionId":"lot-1","bidId":"b1"}' }));
    for (const q of ['reply-0', 'reply-1'] as const) await world.deliver(q);

    expect(json[0]).toMatchObject({ aggregateId: null, attributes: { 'fanin-definition': 'auction' } });
    expect((await world.context().store.getHeader('auction:lot-1'))?.status).toBe('open');
  });
});

describe('fanin show', () => {
  it('prints the header, with ISO times beside how long ago, and the recorded replies', async () => {
    await opened('q-5');
    await reply.run(capture(world.target).io, args({ from: 'desk-a', body: '{"rate":3}' }));
    for (const q of ['reply-0', 'reply-1'] as const) await world.deliver(q);
    const { io, out } = capture(world.target);

    expect(await show.run(io, args({}, 'q-5'))).toBe(0);

    expect(out[0]).toMatch(/^aggregate\s+q-5$/);
    expect(out).toContainEqual(expect.stringMatching(/^status\s+open$/));
    expect(out).toContainEqual(expect.stringMatching(/^replies\s+1 of 2 received, 0 late$/));
    expect(out).toContainEqual(
      expect.stringMatching(/^opened\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(\d.* ago\)$/),
    );
    expect(out).toContain('recorded replies:');
    expect(out.at(-1)).toMatch(/^ {2}0\s+\S+Z\s+\{"rate":3\}$/);
  });

  it('--json gives the state table epoch numbers with their ISO 8601 forms beside them', async () => {
    await opened('q-6');
    const { io, json } = capture(world.target, true);

    await show.run(io, args({}, 'q-6'));

    const doc = json[0] as Record<string, unknown>;
    expect(doc).toMatchObject({ aggregateId: 'q-6', status: 'open', expected: 2, replies: [], held: [] });
    expect(typeof doc.openedAt).toBe('number');
    expect(doc.deadline).toBe((doc.openedAt as number) + 3_600_000);
    expect(doc.openedAtIso).toBe(new Date(doc.openedAt as number).toISOString());
    expect(doc.deadlineIso).toBe(new Date(doc.deadline as number).toISOString());
  });

  it('shows replies held for an aggregate not opened yet', async () => {
    await reply.run(
      capture(world.target).io,
      args({ 'aggregate-id': 'early', 'reply-id': '0', definition: 'orders', body: '{"a":1}' }),
    );
    for (const q of ['reply-0', 'reply-1'] as const) await world.deliver(q);
    const { io, json } = capture(world.target, true);

    await show.run(io, args({}, 'early'));

    expect(json[0]).toMatchObject({
      aggregateId: 'early',
      status: 'not opened',
      held: [{ replyId: '0', body: { a: 1 } }],
    });
  });

  it('fails with exit 1 for an aggregate with no item, naming the table', async () => {
    const run = show.run(capture(world.target).io, args({}, 'ghost'));
    await expect(run).rejects.toBeInstanceOf(CommandError);
    await expect(run).rejects.toThrow('no aggregate "ghost" in table w-state');
  });
});

describe("fanin show: each recipient's fate, for a definition with responders", () => {
  // desk-a has 60 s, desk-b 1 s; a heartbeat buys 120 s more.
  const BANKS = {
    name: 'banks',
    fanOut: { type: 'recipient-list' as const, recipients: ['w-desk-a', 'w-desk-b'] },
    completion: { strategy: 'all' as const },
    timeoutSeconds: 3600,
    responders: { timeoutSeconds: 60, timeouts: { 'w-desk-b': 1 }, heartbeatSeconds: 120 },
  };
  type Row = { replyId: string; label?: string; fate: string; deadline?: number; heartbeatAt?: number };
  type Shown = { openedAt: number; recipients?: Row[]; recipientsAt?: number; recipientsSoFar?: boolean };

  beforeEach(async () => {
    world = await localWorld({ definitions: [...DEFINITIONS, BANKS] });
  });

  async function shown(aggregateId: string): Promise<Shown> {
    const { io, json } = capture(world.target, true);
    await show.run(io, args({}, aggregateId));
    return json[0] as Shown;
  }

  async function deliverReplies(): Promise<void> {
    for (const q of ['reply-0', 'reply-1'] as const) await world.deliver(q);
  }

  async function heartbeat(aggregateId: string, replyId: string): Promise<void> {
    const url = world.provisioned.replyQueueUrls[0] as string;
    const attribute = (value: string) => ({ DataType: 'String', StringValue: value });
    await world.clients.sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: '{}',
        MessageAttributes: {
          'fanin-aggregate-id': attribute(aggregateId),
          'fanin-reply-id': attribute(replyId),
          'fanin-heartbeat': attribute('1'),
        },
        ...(url.endsWith('.fifo')
          ? { MessageGroupId: aggregateId, MessageDeduplicationId: `hb-${replyId}` }
          : {}),
      }),
    );
    await deliverReplies();
  }

  it('an open aggregate shows the fates so far, computed now: labels, deadlines, the last heartbeat', async () => {
    await opened('b-1', 'banks');
    await heartbeat('b-1', '0');
    await reply.run(capture(world.target).io, args({ from: 'desk-b', body: '{"rate":3}' }));
    await deliverReplies();

    const before = Date.now();
    const doc = await shown('b-1');

    expect(doc.recipientsSoFar).toBe(true);
    expect(doc.recipientsAt).toBeGreaterThanOrEqual(before);
    const [desk0, desk1] = doc.recipients ?? [];
    expect(desk0).toMatchObject({ replyId: '0', label: 'w-desk-a', fate: 'no-reply' });
    expect(desk0?.heartbeatAt).toBeGreaterThan(doc.openedAt - 1);
    expect(desk0?.deadline).toBe((desk0?.heartbeatAt ?? 0) + 120_000);
    expect(desk1).toMatchObject({
      replyId: '1',
      label: 'w-desk-b',
      fate: 'replied',
      deadline: doc.openedAt + 1000,
    });
    expect(desk1).not.toHaveProperty('heartbeatAt');
    const { io, out } = capture(world.target);
    await show.run(io, args({}, 'b-1'));
    expect(out).toContainEqual(
      expect.stringMatching(/^recipients so far \(open: their fates at \S+Z, not a result's\):$/),
    );
    expect(out).toContainEqual(expect.stringMatching(/^ {2}REPLY\s+LABEL\s+FATE\s+DEADLINE\s+HEARTBEAT$/));
    expect(out).toContainEqual(expect.stringMatching(/^ {2}0\s+w-desk-a\s+no-reply\s+\S+Z\s+\S+Z$/));
    expect(out).toContainEqual(expect.stringMatching(/^ {2}1\s+w-desk-b\s+replied\s+\S+Z\s+-$/));
  });

  it("an open aggregate's recipient past its own deadline shows timed out so far, before any timer settled it", async () => {
    await opened('b-2', 'banks');
    await new Promise((resolve) => setTimeout(resolve, 1100));

    const doc = await shown('b-2');

    expect(doc.recipientsSoFar).toBe(true);
    expect(doc.recipients?.map((r) => r.fate)).toEqual(['no-reply', 'timed-out']);
    expect((await world.context().store.getHeader('b-2'))?.status).toBe('open');
  });

  it("a closed aggregate shows the fates its result gave, at the seal's time", async () => {
    await opened('b-3', 'banks');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    // desk-b is past its 1 s: desk-a's reply settles every recipient, so all completes.
    await reply.run(capture(world.target).io, args({ from: 'desk-a', body: '{"rate":4}' }));
    await deliverReplies();
    for (let i = 0; i < 5 && (await world.context().store.getHeader('b-3'))?.status !== 'closed'; i += 1) {
      await world.deliver('timer');
      await deliverReplies();
    }
    expect((await world.context().store.getHeader('b-3'))?.status).toBe('closed');
    const completed = await world.clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: world.provisioned.queueUrls.completed, MaxNumberOfMessages: 10 }),
    );
    const result = (completed.Messages ?? [])
      .map(
        (m) => JSON.parse(m.Body ?? '{}') as { aggregateId?: string; closedAt?: number; recipients?: Row[] },
      )
      .find((m) => m.aggregateId === 'b-3');

    const doc = await shown('b-3');

    expect(result?.recipients?.map((r) => r.fate)).toEqual(['replied', 'timed-out']);
    expect(doc.recipientsSoFar).toBe(false);
    expect(doc.recipientsAt).toBe(result?.closedAt);
    // The result's recipients, each with its label (and the ISO forms --json adds to every time).
    expect(doc.recipients).toMatchObject(
      (result?.recipients ?? []).map((r, i) => ({ ...r, label: ['w-desk-a', 'w-desk-b'][i] })),
    );
    const { io, out } = capture(world.target);
    await show.run(io, args({}, 'b-3'));
    expect(out).toContainEqual(
      expect.stringMatching(/^recipients \(as the result gives them, at its seal \S+Z\):$/),
    );
    expect(out).toContainEqual(expect.stringMatching(/^ {2}1\s+w-desk-b\s+timed-out\s+\S+Z\s+-$/));
  });

  it('shows no recipients for a definition without responders', async () => {
    await opened('q-9');

    const doc = await shown('q-9');
    const { io, out } = capture(world.target);
    await show.run(io, args({}, 'q-9'));

    expect(doc).not.toHaveProperty('recipients');
    expect(doc).not.toHaveProperty('recipientsSoFar');
    expect(out.some((line) => line.startsWith('recipients'))).toBe(false);
  });
});

describe('the recipients table show prints', () => {
  const AT = Date.UTC(2026, 11, 2, 12, 0, 0);

  it('shows how often a sub-request was sent again when a recipient says, and no label column when none has one', () => {
    const lines = fatesTable({
      at: AT,
      soFar: false,
      recipients: [
        { replyId: '0', fate: 'replied', deadline: AT - 5000, retries: 0 },
        { replyId: '1', fate: 'timed-out', deadline: AT - 1000, heartbeatAt: AT - 3000, retries: 2 },
      ],
    });

    expect(lines).toEqual([
      'recipients (as the result gives them, at its seal 2026-12-02T12:00:00.000Z):',
      '  REPLY  FATE       DEADLINE                  HEARTBEAT                 RETRIES',
      '  0      replied    2026-12-02T11:59:55.000Z  -                         0',
      '  1      timed-out  2026-12-02T11:59:59.000Z  2026-12-02T11:59:57.000Z  2',
    ]);
  });

  it('shows the last attempt that failed and was asked again when a recipient says', () => {
    const lines = fatesTable({
      at: AT,
      soFar: false,
      recipients: [
        { replyId: '0', fate: 'replied', retries: 1, failedAttempt: 1 },
        { replyId: '1', fate: 'replied' },
      ],
    });

    expect(lines).toEqual([
      'recipients (as the result gives them, at its seal 2026-12-02T12:00:00.000Z):',
      '  REPLY  FATE     DEADLINE  HEARTBEAT  RETRIES  FAILED ATTEMPT',
      '  0      replied  -         -          1        1',
      '  1      replied  -         -          -        -',
    ]);
  });

  it('leaves the retries column out when no recipient says, and marks a missing label or deadline with -', () => {
    const lines = fatesTable({
      at: AT,
      soFar: true,
      recipients: [
        { replyId: '0', label: 'SKU-1', fate: 'no-reply' },
        { replyId: '1', fate: 'not-asked' },
      ],
    });

    expect(lines).toEqual([
      "recipients so far (open: their fates at 2026-12-02T12:00:00.000Z, not a result's):",
      '  REPLY  LABEL  FATE       DEADLINE  HEARTBEAT',
      '  0      SKU-1  no-reply   -         -',
      '  1      -      not-asked  -         -',
    ]);
  });
});

describe('fanin list', () => {
  it('prints the active aggregates oldest first with their replies and deadline', async () => {
    await opened('l-1');
    await opened('l-2', 'orders');
    const { io, out } = capture(world.target);

    await list.run(io, args());

    expect(out[0]).toMatch(/^AGGREGATE\s+DEFINITION\s+STATUS\s+REPLIES\s+AGE\s+DEADLINE$/);
    expect(out[1]).toMatch(/^l-1\s+quotes\s+open\s+0\/2\s+\d+ ms\s+in 1 h$/);
    expect(out[2]).toMatch(/^l-2\s+orders\s+open\s+0\/\?/);
    expect(out).toHaveLength(3);
  });

  it('ends a page with the command that shows the next one, which shows the rest', async () => {
    for (const id of ['p-1', 'p-2', 'p-3']) await opened(id);
    const first = capture(world.target);

    await list.run(first.io, args({ limit: '2' }));

    const more = first.out.at(-1) as string;
    expect(more).toMatch(/^more aggregates: fanin list --limit 2 --cursor \S+$/);
    const cursor = more.split(' --cursor ')[1] as string;
    const next = capture(world.target, true);
    await list.run(next.io, args({ limit: '2', cursor }));
    const ids = [
      ...first.out.slice(1, 3).map((l) => l.split(' ')[0]),
      ...(next.json[0] as { aggregateId: string }[]).map((a) => a.aggregateId),
    ];
    expect(ids.sort()).toEqual(['p-1', 'p-2', 'p-3']);
  });

  it('--json prints the array on stdout, the next page on stderr', async () => {
    for (const id of ['j-1', 'j-2']) await opened(id);
    const { io, json, err, out } = capture(world.target, true);

    await list.run(io, args({ limit: '1' }));

    expect(json[0]).toHaveLength(1);
    expect(out).toEqual([]);
    expect(err[0]).toMatch(/^more aggregates: fanin list --limit 1 --cursor /);
  });

  it.each(['0', '1001', 'ten'])('refuses --limit %s (1-1000)', async (limit) => {
    await expect(list.run(capture(world.target).io, args({ limit }))).rejects.toThrow(
      `--limit must be an integer from 1 to 1000 (given "${limit}")`,
    );
  });

  it('refuses a cursor no page returned as a usage error', async () => {
    await expect(list.run(capture(world.target).io, args({ cursor: 'garbage' }))).rejects.toBeInstanceOf(
      UsageError,
    );
  });

  it('says when there is nothing active, of a definition', async () => {
    const { io, out } = capture(world.target);
    await list.run(io, args({ definition: 'orders' }));
    expect(out).toEqual(['no active aggregates of orders']);
  });

  it('--publish also sends the control command list, whose snapshot goes to the status output', async () => {
    const { io, err } = capture(world.target);

    await list.run(io, args({ publish: true }));
    await world.deliver('control');

    expect(err[0]).toMatch(/^sent control command list \(.+\); the snapshot arrives on w-out-status.fifo$/);
    const status = await world.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: world.provisioned.queueUrls.status,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
      }),
    );
    expect(JSON.stringify(status.Messages)).toContain('fanin.status.active');
  });
});

describe('the deadline show prints', () => {
  const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);

  it('counts down to the deadline of an open aggregate', () => {
    expect(deadlineText('open', NOW + 90_000, NOW)).toBe('2026-12-02T12:01:30.000Z (in 1 min 30 s)');
  });

  it('says a closed or completing aggregate ended before its deadline, with no countdown', () => {
    expect(deadlineText('closed', NOW + 90_000, NOW)).toBe(
      '2026-12-02T12:01:30.000Z (not reached: closed before it)',
    );
    expect(deadlineText('completing', NOW + 1_000, NOW)).toContain('not reached: completing before it');
  });

  it('says how long ago a deadline passed, whatever the status', () => {
    expect(deadlineText('closed', NOW - 5_000, NOW)).toBe('2026-12-02T11:59:55.000Z (5.0 s ago)');
  });
});
