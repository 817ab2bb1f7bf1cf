import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateEventBusCommand, DeleteEventBusCommand } from '@aws-sdk/client-eventbridge';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  makeControlHandler,
  makeFanOutHandler,
  makeReplyHandler,
  makeSweeperHandler,
  makeTimerHandler,
} from '../../../functions/handlers.ts';
import { QueuePoller } from '../../../local/poller.ts';
import { POINTER_CLASS } from '../../../shared/adapters/s3-claim-check.ts';
import { createContext, createDistributor, type FaninClients } from '../../../shared/app.ts';
import {
  createDocumentClient,
  createDynamoClient,
  createEventBridgeClient,
  createS3Client,
  createSqsClient,
} from '../../../shared/aws/clients.ts';
import type { DefinitionInput } from '../../../shared/engine/definition.ts';
import type { FaninContext } from '../../../shared/use-cases/context.ts';
import {
  type FunctionName,
  isFunction,
  type RecordedCall,
  recording,
  unflushedCalls,
} from '../../support/call-recorder.ts';
import { aws } from '../../support/clients.ts';
import { eventBridgeAvailable } from '../../support/eventbridge.ts';
import { FaninUnderTest } from '../../support/fanin.ts';
import {
  evaluateCalls,
  type ResourceMap,
  SynthesizedPolicies,
  type Verdict,
} from '../../support/policy-proof.ts';
import { proveRecordedCalls } from '../../support/suite-proof.ts';

/**
 * The synthesized IAM against the calls: every handler runs here on clients of its own (as each
 * Lambda function has its own clients), through the paths that make its distinct calls — a fan-out
 * continued in another invocation, claim-checked bodies and outputs, replies, a self-starting
 * aggregate, a timer, a sweep, every control command and an external event, a distributor cycle
 * — and each call recorded is evaluated by a real IAM evaluator against the identity policy of the
 * function that made it and the resource policy of what it touched. The emulators authorize
 * nothing: a call AWS would deny passes every other test.
 */

const SMALL = 512;

describe('policies proven against the calls', () => {
  let fanin: FaninUnderTest;
  const contexts = new Map<FunctionName, { ctx: FaninContext; clients: FaninClients }>();
  let definitions: DefinitionInput[];
  let bus: string | undefined;
  let bank = '';
  /** The calls of the scenario below, for the evaluations that follow it. */
  let scenario: { calls: RecordedCall[]; definitions: DefinitionInput[] } | undefined;

  beforeAll(async () => {
    const warehouse = `pp${Date.now().toString(36)}-warehouse`;
    bank = `pp${Date.now().toString(36)}-bank`;
    definitions = [
      {
        name: 'orders',
        completion: { strategy: 'all' },
        fanOut: { type: 'splitter', itemsPath: '$.items', target: warehouse },
        timeoutSeconds: 60,
      },
      {
        name: 'quotes',
        completion: { strategy: 'all' },
        fanOut: { type: 'recipient-list', recipients: [bank] },
        timeoutSeconds: 600,
      },
      { name: 'quick', completion: { strategy: 'first' }, fanOut: { type: 'none' }, timeoutSeconds: 1 },
      {
        name: 'auction',
        mode: 'self-starting',
        correlation: { source: 'path', path: '$.auctionId' },
        replyId: { source: 'path', path: '$.bidId' },
        completion: { strategy: 'count', count: 5 },
        timeoutSeconds: 600,
      },
      {
        name: 'approval',
        completion: { strategy: 'external' },
        fanOut: { type: 'none' },
        timeoutSeconds: 600,
        externalEventPattern: { source: ['shop.orders'], 'detail-type': ['OrderApproved'] },
      },
    ];
    // Every output on the bus too, where EventBridge is served: each function's PutEvents.
    if (eventBridgeAvailable())
      definitions = definitions.map((d) => ({ ...d, outputs: { eventBridge: true } }));
    fanin = await FaninUnderTest.start(definitions, { claimCheckThresholdBytes: SMALL });
    await fanin.targetQueue(warehouse, true);
    await fanin.targetQueue(bank, true);
    if (eventBridgeAvailable()) {
      bus = `${fanin.topology.prefix}-outputs`;
      await aws.eventBridge.send(new CreateEventBusCommand({ Name: bus }));
      fanin.eventBusName = bus;
    }
    for (const fn of ['fanOut', 'reply', 'timer', 'sweeper', 'control', 'distributor'] as const) {
      const clients = {
        sqs: createSqsClient(),
        dynamo: createDocumentClient(createDynamoClient()),
        s3: createS3Client(),
        eventBridge: createEventBridgeClient(),
      };
      contexts.set(fn, {
        clients,
        ctx: createContext(fanin.config, clients, { clock: fanin.clock.read, log: fanin.log }),
      });
    }
  });
  afterAll(async () => {
    if (bus) await aws.eventBridge.send(new DeleteEventBusCommand({ Name: bus })).catch(() => undefined);
    await fanin?.stop();
  });

  const of = (fn: FunctionName) => {
    const found = contexts.get(fn);
    if (!found) throw new Error(`no context for ${fn}`);
    return found;
  };

  /** Lambda's event source for a function: receive and delete with the function's own role. */
  async function consume(
    fn: FunctionName,
    queueUrl: string,
    handler: (event: SQSEvent) => Promise<SQSBatchResponse | undefined>,
  ): Promise<void> {
    const poller = new QueuePoller({
      sqs: of(fn).clients.sqs,
      queueUrl,
      handler,
      failedVisibilitySeconds: 0,
    });
    for (let idle = 0; idle < 2; ) idle = (await poller.pollOnce(0)) === 0 ? idle + 1 : 0;
  }

  const fanOut = (remainingMs: number) => (event: SQSEvent) =>
    makeFanOutHandler(() => of('fanOut').ctx)(event, { getRemainingTimeInMillis: () => remainingMs });
  const replies = (event: SQSEvent) => makeReplyHandler(() => of('reply').ctx)(event);
  const control = (event: SQSEvent) => makeControlHandler(() => of('control').ctx)(event);
  const timers = (event: SQSEvent) => makeTimerHandler(() => of('timer').ctx)(event);

  /** A body stored under the producer prefix and the pointer message to it (Extended Client form). */
  async function claimChecked(key: string, body: unknown): Promise<[unknown, Record<string, string>]> {
    const payload = JSON.stringify(body);
    const bucket = fanin.provisioned.bucketName ?? '';
    await aws.s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: payload }));
    return [
      [POINTER_CLASS, { s3BucketName: bucket, s3Key: key }],
      { ExtendedPayloadSize: String(payload.length) },
    ];
  }

  async function consumeReplies(): Promise<void> {
    for (const url of fanin.provisioned.replyQueueUrls) await consume('reply', url, replies);
  }

  it('every call the handlers make is allowed by the synthesized policies, the continuation of a large fan-out included', async () => {
    // Prepare and act: a fan-out of 501 sub-requests that runs out of time after its first chunk
    // and goes on in another invocation (its request queued again to ingress).
    const items = Array.from({ length: 501 }, (_, i) => ({ sku: `s-${i}` }));
    await fanin.sendRequest({ definition: 'orders', aggregateId: 'o-1', items });
    await fanin.sendRequest({ definition: 'quotes', aggregateId: 'q-1', note: 'x'.repeat(SMALL * 2) });
    await fanin.sendRequest({ definition: 'quotes', aggregateId: 'q-2' });
    await fanin.sendRequest({ definition: 'quick', aggregateId: 'k-1' });
    await fanin.sendRequest({ definition: 'approval', aggregateId: 'ap-1' });
    await fanin.sendRequest({ definition: 'approval', aggregateId: 'ap-2' });
    // a producer's claim-checked request, as the Extended Client writes it (under incoming/)
    await fanin.sendRequest(
      ...(await claimChecked('incoming/pp-request', { definition: 'approval', aggregateId: 'ap-3' })),
    );
    await consume('fanOut', fanin.provisioned.queueUrls.ingress, fanOut(0));

    // the responders answer: a large reply (stored under state/), a self-starting aggregate
    const [large, ...others] = await fanin.takeRequests(bank);
    expect(large).toBeDefined();
    if (large) await fanin.reply(large, { rate: 2.9, terms: 'y'.repeat(SMALL * 2) });
    for (const request of others) await fanin.reply(request, { rate: 3.1 });
    await fanin.sendReply({ auctionId: 'lot-1', bidId: 'b1', price: 10 }, { 'fanin-definition': 'auction' });
    const [pointer, attributes] = await claimChecked('incoming/pp-bid', {
      auctionId: 'lot-1',
      bidId: 'b2',
      price: 9,
    });
    await fanin.sendReply(pointer, { ...attributes, 'fanin-definition': 'auction' });
    await consumeReplies();

    // control: every command, and an external event naming its aggregate
    await fanin.sendControl({
      command: 'set-parameters',
      definition: 'quotes',
      parameters: { timeoutSeconds: 30 },
    });
    await fanin.sendControl({ command: 'list' });
    await fanin.sendControl({ command: 'complete', aggregateId: 'ap-1' });
    await fanin.sendControl({
      version: '0',
      id: 'ev-1',
      source: 'shop.orders',
      'detail-type': 'OrderApproved',
      detail: { aggregateId: 'ap-2' },
    });
    await fanin.sendControl({ command: 'purge', definition: 'auction' });
    await consume('control', fanin.provisioned.queueUrls.control, control);

    // a timer comes due (quick: 1 s), the sweeper ends what is past its deadline, a distributor cycle
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    fanin.clock.advance(2_000);
    await consume('timer', fanin.provisioned.queueUrls.timer, timers);
    fanin.clock.advance(120_000);
    await makeSweeperHandler(() => of('sweeper').ctx)();
    await createDistributor(fanin.config, of('distributor').clients, fanin.clock.read).cycle();

    // Assess: the paths ran (each function made calls, the continuation was sent to ingress)
    // (every call of this file, as the setup file records them: test/support/record-calls.ts)
    expect(recording(), 'the integration project records the calls').toBe(true);
    const calls = unflushedCalls();
    scenario = { calls, definitions };
    expect(new Set(calls.map((c) => c.fn).filter(isFunction))).toEqual(
      new Set(['fanOut', 'reply', 'timer', 'sweeper', 'control', 'distributor']),
    );
    const ingress = fanin.provisioned.queueUrls.ingress;
    expect(
      calls.some(
        (c) =>
          c.fn === 'fanOut' &&
          c.action === 'sqs:SendMessage' &&
          c.resource.kind === 'queue' &&
          c.resource.url === ingress,
      ),
    ).toBe(true);
    expect(calls.some((c) => c.action === 's3:PutObject')).toBe(true);
    for (const fn of ['fanOut', 'reply'] as const) {
      expect(
        calls.some(
          (c) =>
            c.fn === fn &&
            c.action === 's3:GetObject' &&
            c.resource.kind === 'object' &&
            c.resource.key.startsWith('incoming/'),
        ),
        fn,
      ).toBe(true);
    }

    // and every one of them is allowed by the synthesized policies
    const synth = new SynthesizedPolicies({
      definitions,
      prefix: fanin.topology.prefix,
      createEventBus: bus !== undefined,
    });
    const verdicts = await evaluateCalls(synth, resourceMap(synth, fanin, bus), calls);
    const denied = verdicts.filter((v) => v.result !== 'Allowed').map(describeVerdict);
    expect(denied).toEqual([]);

    // and with every sender prop set, the queue policies still let fanin's own calls through
    // (the fan-out's continuation past ingressSenders, the distributor past replySenders)
    const strangers = ['arn:aws:iam::111122223333:role/someone-else'];
    const fenced = new SynthesizedPolicies({
      definitions,
      prefix: fanin.topology.prefix,
      createEventBus: bus !== undefined,
      ingressSenders: strangers,
      replySenders: strangers,
      controlSenders: strangers,
    });
    const fencedVerdicts = await evaluateCalls(fenced, resourceMap(fenced, fanin, bus), calls);
    expect(fencedVerdicts.filter((v) => v.result !== 'Allowed').map(describeVerdict)).toEqual([]);
  });

  it("the kms: calls the calls on encrypted queues, table and bucket imply are allowed by the function's policy and the key's; without the reply role's kms:Decrypt they are denied", async () => {
    // Prepare: the scenario's calls, recorded as a run's (its deployment and theirs)
    if (!scenario) throw new Error('the scenario above did not run');
    const dir = mkdtempSync(join(tmpdir(), 'fanin-policy-kms-'));
    const targets = scenario.definitions.flatMap((d) =>
      d.fanOut?.type === 'splitter'
        ? [d.fanOut.target]
        : d.fanOut?.type === 'recipient-list'
          ? (d.fanOut.recipients ?? [])
          : [],
    );
    writeFileSync(
      join(dir, 'calls.jsonl'),
      [{ kind: 'topology', prefix: fanin.topology.prefix, options: {}, targets }, ...scenario.calls]
        .map((line) => JSON.stringify(line))
        .join('\n'),
    );

    try {
      // Act: the proof of the run, as synthesized and without the reply role's kms:Decrypt on the key
      const proof = await proveRecordedCalls(dir);
      const revoked = await proveRecordedCalls(dir, { revokeKeyUse: { fn: 'reply', action: 'kms:Decrypt' } });

      // Assess: the reply function's implied calls were evaluated, and only they are denied without it
      expect(proof.kmsEvaluated.reply).toBeGreaterThan(0);
      const denied = (p: typeof proof) =>
        new Set(p.denials.map((d) => `${d.fn} ${d.action} ${d.stack} ${d.call}`));
      const before = denied(proof);
      const added = [...denied(revoked)].filter((d) => !before.has(d));
      expect(added.length).toBeGreaterThan(0);
      expect(new Set(added.map((d) => d.split(' ').slice(0, 3).join(' ')))).toEqual(
        new Set(['reply kms:Decrypt encrypted']),
      );
      // (the reply function reads the table, receives from its partitions and reads stored bodies)
      expect(added.some((d) => d.includes('"kind":"table"'))).toBe(true);
      expect(added.some((d) => d.includes('ReceiveMessageCommand'))).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a grant removed from the synthesized policy denies the calls it allowed: without the fan-out's send to ingress, its continuation is denied", async () => {
    // Prepare: the scenario's calls, and the stack they were allowed by
    if (!scenario) throw new Error('the scenario above did not run');
    const synth = new SynthesizedPolicies({
      definitions: scenario.definitions,
      prefix: fanin.topology.prefix,
      createEventBus: bus !== undefined,
    });
    const ingressArn = synth.arnOf(synth.logicalId(synth.fanin.queues.ingress.queue as never));

    // Act: the same calls, evaluated as synthesized and without that one grant (in memory)
    const map = resourceMap(synth, fanin, bus);
    const as = await evaluateCalls(synth, map, scenario.calls);
    const without = await evaluateCalls(synth, map, scenario.calls, {
      revoke: { fn: 'fanOut', action: 'sqs:SendMessage', resource: ingressArn },
    });

    // Assess: the continuation, and only it, is denied in addition, by nothing allowing it
    const deniedIn = (verdicts: readonly Verdict[]) =>
      new Set(
        verdicts.filter((v) => v.result !== 'Allowed').map((v) => `${v.call.fn} ${v.call.action} ${v.arn}`),
      );
    const before = deniedIn(as);
    const added = [...deniedIn(without)].filter((d) => !before.has(d));
    expect(added).toEqual([`fanOut sqs:SendMessage ${ingressArn}`]);
    const continuation = without.find(
      (v) => v.call.fn === 'fanOut' && v.arn === ingressArn && v.result !== 'Allowed',
    );
    expect(continuation?.deniedBy).toEqual(['no statement of the role or the resource allows it']);
  });
});

function describeVerdict(v: Verdict): string {
  const keys = v.call.leadingKeys ? ` LeadingKeys=${JSON.stringify(v.call.leadingKeys)}` : '';
  return `${v.call.fn} ${v.call.action} ${v.arn}${keys} (${v.call.command}): ${v.result}`;
}

/** The emulator's resources by the synthesized ones, by role: same prefix, so the same names. */
function resourceMap(
  synth: SynthesizedPolicies,
  fanin: FaninUnderTest,
  bus: string | undefined,
): ResourceMap {
  const queues = new Map<string, string>();
  const { fanin: construct } = synth;
  const all = [...Object.values(construct.queues), ...construct.replyPartitions];
  for (const queue of all) {
    for (const q of [queue.queue, queue.deadLetterQueue])
      queues.set(synth.nameOf(synth.logicalId(q)), synth.logicalId(q));
  }
  // Every queue fanin provisioned is one the stack synthesizes, by the name its role gives it.
  for (const url of Object.values(fanin.provisioned.allQueueUrls)) {
    expect(queues.has(url.slice(url.lastIndexOf('/') + 1)), url).toBe(true);
  }
  const table = { name: fanin.provisioned.tableName, id: synth.logicalId(construct.table as never) };
  expect(synth.nameOf(table.id)).toBe(table.name);
  return {
    queues,
    table,
    ...(fanin.provisioned.bucketName
      ? { bucket: { name: fanin.provisioned.bucketName, id: synth.logicalId(construct.bucket as never) } }
      : {}),
    ...(bus && construct.eventBus
      ? { bus: { name: bus, id: synth.logicalId(construct.eventBus as never) } }
      : {}),
  };
}
