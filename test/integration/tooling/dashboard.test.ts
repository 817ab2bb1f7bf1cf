import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { aws } from '../../support/clients.ts';
import { type RuntimeProcess, startRuntime } from '../../support/runtime.ts';
import { type Found, findBrowser, requireTool } from '../../support/tools.ts';

/**
 * The dashboard in a real browser (an installed Chrome, Chromium or Edge, found by
 * test/support/tools.ts, driven by playwright-core) during a real run: a runtime started for this
 * file, requests and replies sent through the CLI, and the page asserted as it updates itself over
 * Server-Sent Events. Without a browser each test is reported skipped with the reason (a failure
 * with FANIN_REQUIRE_TOOLS=1, as in .ci/run).
 */
let browserFound: Found;
const prefix = `dash-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
let dir: string;
let runtime: RuntimeProcess;
let browser: BrowserContext;
let page: Page;

beforeAll(async () => {
  browserFound = await findBrowser();
  if (browserFound.missing !== undefined) return;
  dir = await mkdtemp(join(tmpdir(), 'fanin-dash-'));
  // A JSON configuration (with `{prefix}` placeholders) whose distributor runs only at start, so
  // messages put on the backlog stay there for the page to show.
  const config = join(dir, 'fanin.config.json');
  await writeFile(
    config,
    JSON.stringify({
      replyPartitions: 3,
      partitioning: { highWatermark: 50, lowWatermark: 10, distributorIntervalSeconds: 3600 },
      definitions: [
        {
          name: 'approval',
          completion: { strategy: 'external' },
          timeoutSeconds: 3600,
        },
        {
          name: 'quotes',
          fanOut: { type: 'recipient-list', recipients: ['{prefix}-desk'] },
          completion: { strategy: 'all' },
          timeoutSeconds: 3600,
        },
        {
          // Each bank has 15 s of its own to reply.
          name: 'banks',
          fanOut: { type: 'recipient-list', recipients: ['{prefix}-bank-a', '{prefix}-bank-b'] },
          completion: { strategy: 'all' },
          timeoutSeconds: 3600,
          responders: { timeoutSeconds: 15 },
        },
      ],
      responderQueues: ['desk', 'bank-a', 'bank-b'],
    }),
  );
  runtime = await startRuntime({ prefix, args: ['--config', config, '--quiet'] });
  // A fresh profile (user data dir) per run, so nothing of an earlier run is reused.
  browser = await chromium.launchPersistentContext(join(dir, 'chromium-profile'), {
    executablePath: browserFound.path,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  await page.goto(runtime.state.dashboardUrl ?? 'about:blank');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  if (runtime) expect(await runtime.stop()).toBe(0);
  if (dir) await rm(dir, { recursive: true, force: true });
}, 60_000);

/** Runs the test when a browser was found; otherwise reports it skipped (or failed) with why. */
const needsBrowser = (context: TestContext): boolean => requireTool(context, 'browser', browserFound.missing);

const text = (testId: string) => page.getByTestId(testId).first().textContent();

describe('dashboard', () => {
  it('shows each partition with its depth over time and its watermarks, live', async (context) => {
    if (!needsBrowser(context)) return;
    // Assess: the page connected and draws one card per partition plus the backlog
    await expect.poll(() => text('status'), { timeout: 20_000 }).toBe('live');
    for (const index of [0, 1, 2]) {
      const card = page.getByTestId(`partition-${index}`);
      await expect.poll(() => card.textContent(), { timeout: 10_000 }).toContain(`${prefix}-reply-${index}`);
      expect(await card.getByTestId(`partition-${index}-depth`).textContent()).toBe('0');
      expect(await card.getByTestId(`partition-${index}-availability`).textContent()).toBe('available');
      expect(await card.getByTestId('hwm-label').textContent()).toBe('HWM 50');
      expect(await card.getByTestId('lwm-label').textContent()).toBe('LWM 10');
    }
    // The depth line grows a point per sample: the chart moves while we watch.
    const points = () =>
      page.getByTestId('partition-0-chart').locator('polyline').getAttribute('data-points');
    const first = Number(await points());
    await expect.poll(async () => Number(await points()), { timeout: 20_000 }).toBeGreaterThan(first + 1);
  });

  it('shows a partition disabled by the operator and the backlog depth', async (context) => {
    if (!needsBrowser(context)) return;
    // Act
    expect((await runtime.cli(['disable', '2'])).code).toBe(0);
    await aws.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: runtime.state.queues.backlog.url,
        Entries: Array.from({ length: 7 }, (_, i) => ({ Id: String(i), MessageBody: JSON.stringify({ i }) })),
      }),
    );

    // Assess
    await expect.poll(() => text('partition-2-availability'), { timeout: 20_000 }).toBe('send-disabled');
    await expect.poll(() => text('backlog-depth'), { timeout: 20_000 }).toBe('7');
    expect((await runtime.cli(['enable', '2'])).code).toBe(0);
    await expect.poll(() => text('partition-2-availability'), { timeout: 20_000 }).toBe('available');
  }, 120_000);

  it('counts aggregates by state, throughput and completion latency, and lists the latest outputs', async (context) => {
    if (!needsBrowser(context)) return;
    // Act: one aggregate stays open, one completes through its replies, one by a complete command
    const cli = (...args: string[]) => runtime.cli(args);
    await cli('send', 'approval', '--aggregate-id', 'dash-open');
    await cli('send', 'approval', '--aggregate-id', 'dash-approved');
    await cli('send', 'quotes', '--aggregate-id', 'dash-quotes');
    await expect.poll(() => text('count-open'), { timeout: 20_000 }).toBe('3');
    expect(await text('open-by-definition')).toContain('approval: 2');
    expect((await cli('reply', '--from', 'desk', '--body', '{"price":7}')).code).toBe(0);
    expect((await cli('complete', '--aggregate-id', 'dash-approved')).code).toBe(0);

    // Assess
    await expect.poll(() => text('count-completed'), { timeout: 30_000 }).toBe('2');
    expect(await text('count-open')).toBe('1');
    const rows = page.getByTestId('output-row');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    const ids = await rows.evaluateAll((nodes) => nodes.map((n) => n.getAttribute('data-aggregate-id')));
    expect(ids).toEqual(expect.arrayContaining(['dash-quotes', 'dash-approved']));
    expect(
      await page.locator('[data-testid="output-row"][data-aggregate-id="dash-quotes"]').textContent(),
    ).toContain('1 reply collected');
    expect(await text('latency-last')).toMatch(/\d+(\.\d)? (ms|s)/);
    expect(await text('latency-p50')).toMatch(/\d+(\.\d)? (ms|s)/);
    expect(await text('totals')).toMatch(/^3 \/ [1-9]\d*$/);
    const consumers = await page.getByTestId('consumers').textContent();
    expect(consumers).toContain(`${prefix}-ingress`);
    expect(consumers).toContain(`${prefix}-reply-2`);
  }, 120_000);

  it("shows an aggregate's history when it is clicked, with its replies arriving while it is open", async (context) => {
    if (!needsBrowser(context)) return;
    // Arrange: an aggregate that stays open until an external command completes it.
    const cli = (...args: string[]) => runtime.cli(args);
    expect(
      (await cli('send', 'approval', '--aggregate-id', 'dash-live', '--request-id', 'req-live')).code,
    ).toBe(0);
    const link = page.locator(
      '[data-testid="aggregate-row"][data-aggregate-id="dash-live"] [data-testid="aggregate-link"]',
    );
    await expect.poll(() => link.count(), { timeout: 60_000 }).toBe(1);

    // Act: click it
    await link.click();

    // Assess: the timeline, opened by its request, while nothing has replied
    const panel = page.getByTestId('history');
    await expect.poll(() => panel.isVisible(), { timeout: 30_000 }).toBe(true);
    expect(await text('history-id')).toBe('dash-live');
    await expect.poll(() => text('history-summary'), { timeout: 30_000 }).toContain('approval: open');
    const row = (kind: string) => page.locator(`[data-testid="history-event"][data-kind="${kind}"]`);
    await expect.poll(() => row('opened').count(), { timeout: 30_000 }).toBe(1);
    expect(await row('opened').textContent()).toContain('opened by request req-live');
    expect(await row('reply').count()).toBe(0);

    // Act: a reply while the panel is open, then the external completion
    const reply = ['reply', '--aggregate-id', 'dash-live', '--definition', 'approval', '--reply-id'];
    expect((await cli(...reply, 'r-1', '--body', '{"ok":true}')).code).toBe(0);

    // Assess: it appears without another click
    await expect.poll(() => row('reply').count(), { timeout: 60_000 }).toBe(1);
    expect(await row('reply').getAttribute('data-reply-id')).toBe('r-1');
    expect(await row('reply').textContent()).toContain('reply r-1 recorded');
    expect(await text('history-summary')).toContain('1 of ? replies recorded');
    expect((await cli('complete', '--aggregate-id', 'dash-live')).code).toBe(0);
    await expect.poll(() => row('closed').count(), { timeout: 60_000 }).toBe(1);
    expect(await row('sealed').textContent()).toContain('with 1 member');
    expect(await row('published').textContent()).toContain('dash-live/result');
    expect(await text('history-summary')).toMatch(/approval: closed \(completed by \w+/);

    // Assess: the same timeline as `fanin history`
    const printed = await cli('history', 'dash-live', '--json');
    const events = (JSON.parse(printed.stdout) as { events: { kind: string; text: string }[] }).events;
    const shown = await page
      .getByTestId('history-event')
      .evaluateAll((nodes) =>
        nodes.map((n) => [n.getAttribute('data-kind'), n.lastElementChild?.textContent]),
      );
    expect(shown).toEqual(events.map((e) => [e.kind, e.text]));
    expect(await page.getByTestId('history-gaps').locator('li').count()).toBeGreaterThan(0);

    // Act and assess: an aggregate that does not exist says so
    await page.getByTestId('history-input').fill('dash-never');
    await page.getByTestId('history-open').click();
    await expect
      .poll(() => text('history-summary'), { timeout: 30_000 })
      .toContain('no aggregate "dash-never"');
    expect(await page.getByTestId('history-event').count()).toBe(0);
  }, 240_000);

  it("shows each recipient's fate for a definition with responders: so far while open, the result's once closed", async (context) => {
    if (!needsBrowser(context)) return;
    // Arrange: bank-a replies, bank-b stays silent past its own 15 s.
    const cli = (...args: string[]) => runtime.cli(args);
    expect((await cli('send', 'banks', '--aggregate-id', 'dash-banks')).code).toBe(0);
    expect((await cli('reply', '--from', 'bank-a', '--body', '{"rate":3}', '--wait-for', '30')).code).toBe(0);

    // Act: open its history while it is open
    await page.getByTestId('history-input').fill('dash-banks');
    await page.getByTestId('history-open').click();

    // Assess: the fates so far, bank-a replied, bank-b not yet
    const fate = (replyId: string) =>
      page.locator(`[data-testid="recipient-row"][data-reply-id="${replyId}"]`).getAttribute('data-fate');
    await expect.poll(() => fate('0'), { timeout: 30_000 }).toBe('replied');
    expect(await text('history-summary')).toContain('banks: open');
    expect(await text('history-recipients-title')).toContain('Recipients so far (open: their fates at');
    expect(await page.locator('[data-testid="recipient-row"][data-reply-id="1"]').textContent()).toContain(
      `${prefix}-bank-b`,
    );

    // Assess: once bank-b's deadline settled it timed out, all completed: the result's fates, as `fanin show` gives them
    await expect.poll(() => text('history-summary'), { timeout: 60_000 }).toMatch(/banks: closed/);
    await expect
      .poll(() => text('history-recipients-title'), { timeout: 30_000 })
      .toContain('Recipients (as the result gives them, at its seal');
    expect(await fate('1')).toBe('timed-out');
    const shown = JSON.parse((await cli('show', 'dash-banks', '--json')).stdout) as {
      recipients: { replyId: string; label?: string; fate: string; deadline?: number }[];
    };
    const rows = await page
      .getByTestId('recipient-row')
      .evaluateAll((nodes) => nodes.map((n) => [...n.children].map((c) => c.textContent)));
    expect(rows).toEqual(
      shown.recipients.map((r) => [
        r.replyId,
        r.label ?? '–',
        r.fate,
        r.deadline === undefined ? '–' : new Date(r.deadline).toISOString(),
        '–',
        '–',
      ]),
    );

    // Act and assess: an aggregate of a definition without responders shows no recipients
    expect((await cli('send', 'approval', '--aggregate-id', 'dash-plain')).code).toBe(0);
    await page.getByTestId('history-input').fill('dash-plain');
    await page.getByTestId('history-open').click();
    await expect.poll(() => text('history-summary'), { timeout: 30_000 }).toContain('approval: open');
    expect(await page.getByTestId('history-recipients-box').isVisible()).toBe(false);
    expect(await page.getByTestId('recipient-row').count()).toBe(0);
  }, 240_000);
});
