import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LISTED_STATUSES, type ListedStatus, STEP_STATUSES } from '../../engine/index.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { type ServeHandle, startServe } from '../../functions/local/serve.js';
import { createJsonLogger } from '../../functions/telemetry/json-logger.js';
import {
  abort,
  createWorker,
  suspend,
  type Worker,
  WorkerError,
  type WorkerHandler,
  type WorkerResult,
} from '../../functions/worker/index.js';
import { buildDashboardAssets, type DashboardAsset } from '../../scripts/build-dashboard.js';
import { HeldRequests } from '../support/held-requests.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';
import { measureContrasts, unreadable } from '../support/readability.js';

/**
 * Every job status and every step status, drawn by the dashboard in chromium against serve and
 * RabbitMQ, photographed at 1440 px and 390 px into test-artifacts/dashboard/states/, and measured:
 * each badge, graph node and timeline row must be readable (WCAG AA contrast), and nothing may reach
 * past a phone's window. The first test needs no job: it draws each status of the engine's lists
 * with the dashboard's stylesheet, so a status added to the engine without its colours fails it.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts/dashboard/states');
const CHROMIUM = '/usr/bin/chromium';
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const STATE_TIMEOUT = 20_000;

const suffix = uniqueName('states');
const queues = {
  script: `${suffix}-script`,
  hold: `${suffix}-hold`,
  /** No worker listens to it. */
  nobody: `${suffix}-nobody`,
  replies: `${suffix}-replies`,
};

/**
 * `states` holds five step statuses in one running job: `fetch` completes on its second attempt,
 * `audit` is skipped, `review`'s worker suspends it, `approve` waits for its signal, `crunch` runs
 * (its worker holds it) and `ship` waits for them.
 */
const WORKFLOWS = `workflows:
  - name: states
    description: Every state a step can be in, in one job.
    steps:
      - name: fetch
        queue: ${queues.script}
        retries: 2
        params: { act: flaky }
      - name: audit
        queue: ${queues.script}
        when: 'false'
      - name: review
        queue: ${queues.script}
        depends: [fetch]
        params: { act: suspend }
      - name: approve
        type: signal
        depends: [fetch]
      - name: crunch
        queue: ${queues.hold}
        depends: [fetch]
      - name: ship
        queue: ${queues.script}
        depends: [review, approve, crunch]
  - name: states-fail
    steps:
      - name: charge
        queue: ${queues.script}
        params: { act: fail }
      - name: notify
        queue: ${queues.hold}
  - name: states-abort
    steps:
      - name: check
        queue: ${queues.script}
        params: { act: abort }
  - name: states-done
    steps:
      - name: fetch
        queue: ${queues.script}
        retries: 2
        params: { act: flaky }
  - name: states-limited
    maxRunning: 1
    steps:
      - name: work
        queue: ${queues.hold}
  - name: states-many
    steps:
      - name: each
        task: many-item
    tasks:
      - name: many-item
        itemListKey: items
        steps:
          - name: work
            queue: ${queues.script}
            params: { act: item }
  - name: states-caller
    steps:
      - name: pay
        workflow: states-callee
  - name: states-callee
    steps:
      - name: charge
        queue: ${queues.hold}
  - name: states-unheard
    steps:
      - name: price
        queue: ${queues.nobody}
  - name: states-fan
    steps:
      - name: each
        task: item
    tasks:
      - name: item
        itemListKey: items
        concurrency: 1
        steps:
          - name: work
            queue: ${queues.hold}
`;

/** The one child of `states-many` that fails. */
const FAILING_ITEM = 1_234;

/** Answers as the step's `act` says: a first attempt that fails, a failure, an abort, a suspend. */
const script: WorkerHandler = (input, context): WorkerResult => {
  switch (input.act) {
    case 'flaky':
      if (context.attempt === 1)
        throw new WorkerError('the source timed out (the first attempt always does)');
      return { fetched: true };
    case 'fail':
      throw new WorkerError('card declined', { retryable: false });
    case 'abort':
      return abort('the account is closed');
    case 'item':
      // One child of the 2,001 fails, which fails its fan-out: the children still running are cancelled.
      if (input.item === FAILING_ITEM)
        throw new WorkerError(`item ${FAILING_ITEM} is broken`, { retryable: false });
      return {};
    case 'suspend':
      if (input.signal) return { reviewed: true };
      return suspend('waiting for approval by finance');
    default:
      return {};
  }
};

const held = new HeldRequests();
let work: string;
let assets: Map<string, DashboardAsset>;
let serve: ServeHandle;
let browser: BrowserContext;
let workers: Worker[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `chromium is not installed at ${CHROMIUM}; the dashboard tests need it: apt-get install -y chromium ` +
        '(or run scripts/ensure-test-services.sh)',
    );
  }
  work = await mkdtemp(join(tmpdir(), 'switchyard-states-'));
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(join(work, 'workflows.yaml'), WORKFLOWS);
  assets = await buildDashboardAssets();
  serve = await startServe({
    configFiles: [join(work, 'workflows.yaml')],
    db: join(work, 'switchyard.db'),
    bus: 'rabbitmq',
    amqpUrl: AMQP_URL,
    replyQueue: queues.replies,
    port: 0,
    dashboard: assets,
    logger: createJsonLogger({ level: 'error' }),
  });
  const quiet = { info() {}, warn() {}, error: console.error };
  workers = [
    createWorker({ queue: queues.script, handler: script, concurrency: 4, amqpUrl: AMQP_URL, logger: quiet }),
    createWorker({
      queue: queues.hold,
      handler: held.handler,
      concurrency: 8,
      amqpUrl: AMQP_URL,
      logger: quiet,
    }),
  ];
  await Promise.all(workers.map((worker) => worker.start()));
  browser = await chromium.launchPersistentContext(join(work, 'chromium-profile'), {
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
    headless: true,
    viewport: WIDE,
  });
}, 120_000);

afterAll(async () => {
  held.releaseAll();
  await browser?.close();
  await Promise.all(workers.map((worker) => worker.stop()));
  await serve?.close();
  await deleteQueues(Object.values(queues));
  if (work) await rm(work, { recursive: true, force: true });
});

async function api<T>(method: string, path: string, body?: string): Promise<T> {
  const response = await fetch(`${serve.url}${path}`, { method, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

const start = async (workflow: string, input: object = {}, query = '') =>
  (await api<{ id: string }>('POST', `/api/workflow/${workflow}${query}`, JSON.stringify(input))).id;

const job = (id: string) => api<JobDocument>('GET', `/api/job/${id}`);

/** Waits until the job's document satisfies `ready`. */
async function until(id: string, what: string, ready: (job: JobDocument) => boolean): Promise<JobDocument> {
  let last: JobDocument | undefined;
  await eventually(
    what,
    async () => {
      last = await job(id);
      return ready(last);
    },
    STATE_TIMEOUT,
  );
  return last as JobDocument;
}

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return { page, errors };
}

/**
 * The page at both widths: photographed, measured, and at 390 px nothing wider than the window, the
 * header within it and its namespace picker on screen.
 */
async function photograph(page: Page, name: string): Promise<void> {
  for (const size of [WIDE, PHONE]) {
    await page.setViewportSize(size);
    await page.mouse.move(0, 0);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${size.width}.png`), fullPage: true });
    expect(unreadable(await measureContrasts(page)), `${name} at ${size.width} px`).toEqual([]);
    if (size === PHONE) {
      expect(
        await page.evaluate('document.documentElement.scrollWidth'),
        `${name}: page width`,
      ).toBeLessThanOrEqual(PHONE.width);
      const header = await page.locator('.top-inner').boundingBox();
      expect(header && header.x + header.width, `${name}: header`).toBeLessThanOrEqual(PHONE.width);
      const picker = await page.locator('select[aria-label="Namespace"]').boundingBox();
      expect(picker, `${name}: the namespace picker is drawn`).not.toBeNull();
      expect(
        picker && picker.x >= 0 && picker.x + picker.width <= PHONE.width,
        `${name}: picker on screen`,
      ).toBe(true);
    }
  }
  await page.setViewportSize(WIDE);
}

describe("Dashboard: every status of the engine's lists has its colours", () => {
  it('draws each job and step status as a badge, a graph node and a timeline row, readable', async () => {
    // Prepare: the dashboard's own stylesheet, and one of each drawing per status.
    const css = assets.get('/assets/app.css')?.body.toString() ?? '';
    expect(css).toContain('.badge');
    const statuses = [...new Set<string>([...LISTED_STATUSES, ...STEP_STATUSES])];
    const drawings = statuses
      .map(
        (status) => `
      <div class="card" data-status="${status}">
        <span class="badge state-${status}">${status}</span>
        <svg width="240" height="100"><g class="graph"><g class="node state-${status}" data-step="${status}">
          <rect class="node-box" width="200" height="60"/>
          <text class="node-label" x="10" y="24">${status}</text>
          <text class="node-note" x="10" y="44">a note</text>
        </g></g>
        <a class="timeline-row state-${status}" data-timeline-step="${status}"><g>
          <rect class="timeline-row-hit" width="240" height="28"/>
          <text class="timeline-label" x="4" y="18">${status}</text>
          <rect class="timeline-bar" x="120" width="100" height="14"/>
          <rect class="timeline-segment state-${status}" data-attempt="1" x="120" width="60" height="14"/>
        </g></a></svg>
      </div>`,
      )
      .join('');
    const { page } = await openPage();
    await page.setContent(`<!doctype html><style>${css}</style><main class="main">${drawings}</main>`);

    // Act
    const unstyled = await page.evaluate((names) => {
      // The page's DOM, as much as is read here (the project's TypeScript has no DOM library).
      const { document, getComputedStyle } = globalThis as unknown as {
        document: { querySelector(selector: string): object };
        getComputedStyle(element: object): { getPropertyValue(name: string): string };
      };
      const missing: string[] = [];
      for (const status of names) {
        const badge = document.querySelector(`.badge.state-${status}`);
        for (const variable of ['--fill', '--stroke', '--ink'])
          if (!getComputedStyle(badge).getPropertyValue(variable).trim())
            missing.push(`${status}: ${variable}`);
      }
      return missing;
    }, statuses);
    const contrasts = await measureContrasts(page);

    // Assess
    expect(unstyled, 'every status sets its fill, stroke and ink (styles.css, "States")').toEqual([]);
    expect(contrasts.length).toBeGreaterThanOrEqual(statuses.length * 5);
    expect(unreadable(contrasts)).toEqual([]);
    await page.screenshot({ path: join(ARTIFACTS, 'palette.png'), fullPage: true });
    await page.close();
  });
});

describe('Dashboard: every job and step status, at 1440 px and 390 px', { timeout: 240_000 }, () => {
  const ids = {} as Record<ListedStatus, string>;
  let fan: string;

  beforeAll(async () => {
    // Another namespace, so the header has its picker to show.
    await api('PUT', '/api/ns/team-a/workflow/ledger', 'name: ledger\nsteps:\n  - name: post\n');

    // A job whose steps wait for someone (a suspended step, a signal step) is listed as waiting.
    ids.waiting = await start('states');
    ids.paused = await start('states');
    ids.cancelled = await start('states');
    ids.failed = await start('states-fail');
    ids.aborted = await start('states-abort');
    ids.completed = await start('states-done');
    ids.scheduled = await start('states', {}, `?at=${new Date(Date.now() + 3_600_000).toISOString()}`);
    const first = await start('states-limited');
    ids.queued = await start('states-limited');
    fan = await start('states-fan', { items: [1, 2, 3] });

    const waiting = (document: JobDocument) =>
      document.waitingFor?.length === 2 && document.steps.crunch?.status === 'running';
    for (const id of [ids.waiting, ids.paused, ids.cancelled]) await until(id, `job ${id} to wait`, waiting);
    await api('POST', `/api/job/${ids.paused}/pause`);
    await api('DELETE', `/api/job/${ids.cancelled}`);
    await until(ids.failed, 'the failing job to fail', (document) => document.status === 'failed');
    await until(ids.aborted, 'the aborting job to abort', (document) => document.status === 'aborted');
    await until(ids.completed, 'the flaky job to complete', (document) => document.status === 'completed');
    await until(first, 'the first limited job to run', (document) => document.status === 'running');
    ids.running = first;
    const children = await api<{ children: { uuid: string; index: number; status: ListedStatus }[] }>(
      'GET',
      `/api/job/${fan}/children?step=each`,
    );
    ids.pending = children.children.find((child) => child.status === 'pending')?.uuid as string;
    expect(ids.pending, 'a child waits for its turn').toBeDefined();
  }, 120_000);

  it('has a job of every status of the engine, and among them every step status', async () => {
    const documents = await Promise.all(LISTED_STATUSES.map((status) => job(ids[status])));
    expect(documents.map((document) => document.status)).toEqual(LISTED_STATUSES);
    const stepStatuses = new Set(
      documents.flatMap((document) => Object.values(document.steps).map((s) => s.status)),
    );
    expect([...stepStatuses].sort()).toEqual([...STEP_STATUSES].sort());
  });

  it.each(LISTED_STATUSES)('a %s job: photographed and readable at both widths', async (status) => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${ids[status]}`);
    await page
      .locator(`.job-view[data-job-status="${status}"] .graph .node`)
      .first()
      .waitFor({ timeout: STATE_TIMEOUT });
    await page.locator('.timeline-row').first().waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('.job-header .badge').first().textContent()).toBe(
      status.charAt(0).toUpperCase() + status.slice(1),
    );
    await photograph(page, `job-${status}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows the waits of a job waiting for someone: the suspended step with its note, the signal step, on the graph and the page', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${ids.waiting}?step=review`);
    const node = (step: string) => page.locator(`.graph-card [data-step="${step}"]`);
    await node('review').waitFor({ timeout: STATE_TIMEOUT });
    expect(await node('review').getAttribute('data-state')).toBe('suspended');
    // The box shows what fits of the note; its tooltip, the whole of it.
    expect(await node('review').locator('.node-note').textContent()).toMatch(/^suspended: waiting for/);
    expect(await node('review').locator('title').textContent()).toContain(
      'suspended: waiting for approval by finance',
    );
    expect(await node('approve').getAttribute('data-awaiting')).toBe('signal');
    expect(await node('approve').locator('.node-note').textContent()).toMatch(/^waiting for signal · /);
    expect(await node('fetch').locator('.node-note').textContent()).toMatch(/^completed in .* · attempt 2$/);
    const waits = page.locator('.note-waiting[data-waiting="2"]');
    expect(await waits.locator('[data-wait="suspended"]').textContent()).toContain(
      'waiting for approval by finance',
    );
    expect(await waits.locator('[data-wait="signal"]').textContent()).toContain('waits for its signal');
    // The suspended step's panel: its note, and the form that sends it again.
    const panel = page.locator('[data-step-panel="review"]');
    expect(await panel.locator('.step-suspended').getAttribute('data-suspend-note')).toBe(
      'waiting for approval by finance',
    );
    expect(await panel.getByRole('button', { name: 'Send signal' }).isVisible()).toBe(true);
    // The step that completed on a retry: its first error, not as a failure.
    await page.goto(`${serve.url}/#/job/${ids.waiting}?step=fetch`);
    const fetchPanel = page.locator('[data-step-panel="fetch"]');
    await fetchPanel.locator('.step-error').waitFor({ timeout: STATE_TIMEOUT });
    expect(await fetchPanel.locator('.note-error').count()).toBe(0);
    expect(await fetchPanel.locator('.note-retried').textContent()).toContain('Completed on attempt 2');
    await photograph(page, 'step-completed-on-retry');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('lists every job with its status, its waits, its retries and its clock, readable at both widths', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/jobs`);
    const row = (id: string) => page.locator(`.jobs-table tr[data-job="${id}"]`);
    await row(ids.waiting).waitFor({ timeout: STATE_TIMEOUT });
    expect(await row(ids.waiting).locator('.wait-note').allTextContents()).toEqual([
      'suspended: waiting for approval by finance',
      'waiting for signal: approve',
    ]);
    expect(await row(ids.completed).locator('.tag-retries').textContent()).toBe('1 retry');
    expect(await row(ids.completed).locator('.note-error, .text-failed').count()).toBe(0);
    expect(await row(ids.scheduled).locator('.col-duration').textContent()).toMatch(/^starts in /);
    expect(await row(ids.queued).locator('.col-duration').textContent()).toMatch(/^queued /);
    expect(await row(ids.paused).locator('.col-duration').textContent()).toMatch(/^paused /);
    // A job waiting for someone runs: its clock runs from its first step.
    expect(await row(ids.waiting).locator('.col-duration').textContent()).toMatch(/^running /);
    expect(await row(ids.running).locator('.col-duration').textContent()).toMatch(/^running /);
    await photograph(page, 'jobs');

    // The workflows, and a workflow's page with its recent jobs: the same rows, the same colours.
    await page.goto(`${serve.url}/#/`);
    await page.locator('.workflow-card[data-workflow="states"] .graph').waitFor({ timeout: STATE_TIMEOUT });
    await photograph(page, 'workflows');
    await page.goto(`${serve.url}/#/workflow/states`);
    await page.locator(`.workflow-view tr[data-job="${ids.waiting}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await photograph(page, 'workflow');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a fan-out's children by ranges and status, failed first, readable at both widths", async () => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${fan}?step=each`);
    const panel = page.locator('[data-step-panel="each"]');
    await panel.locator('.child').first().waitFor({ timeout: STATE_TIMEOUT });
    expect(
      await panel
        .locator('.child')
        .evaluateAll((chips) => chips.map((chip) => chip.getAttribute('data-state'))),
    ).toEqual(['running', 'pending', 'pending']);
    await panel.locator('select[name="child-status"]').selectOption('pending');
    await expect
      .poll(() => panel.locator('.children-summary').getAttribute('data-children-matching'), {
        timeout: STATE_TIMEOUT,
      })
      .toBe('2');
    await photograph(page, 'job-fan-out-children');
    expect(errors).toEqual([]);
    await page.close();
  });
  it('shows a fan-out of 2,001 children a range of 500 at a time, failed first, and one status across all', async () => {
    // Prepare: 2,001 children, one of which fails the fan-out.
    const id = await start('states-many', { items: Array.from({ length: 2_001 }, (_, n) => n) });
    await until(id, 'the fan-out to fail', (document) => document.status === 'failed');
    const { page, errors } = await openPage();

    // Act: the range of the failed child.
    await page.goto(`${serve.url}/#/job/${id}?step=each`);
    const panel = page.locator('[data-step-panel="each"]');
    const range = panel.locator('select[name="child-range"]');
    await range.waitFor({ timeout: STATE_TIMEOUT });
    expect(await range.locator('option').allTextContents()).toEqual([
      '#0–499',
      '#500–999',
      '#1000–1499',
      '#1500–1999',
      '#2000–2000',
    ]);
    await range.selectOption({ label: '#1000–1499' });

    // Assess: the failed child first, then the range in order; one request for the range.
    await expect
      .poll(() => panel.locator('.children-summary').getAttribute('data-children-range'), {
        timeout: STATE_TIMEOUT,
      })
      .toBe('1000-1499');
    const chips = await panel
      .locator('.child')
      .evaluateAll((links) =>
        links.map((link) => [link.getAttribute('data-child-index'), link.getAttribute('data-state')]),
      );
    expect(chips).toHaveLength(500);
    expect(chips[0]).toEqual([String(FAILING_ITEM), 'failed']);
    expect(chips[1]?.[0]).toBe('1000');
    expect(await panel.locator('.first-failed').getAttribute('data-first-failed')).toBe(
      (await job(id)).error?.message.match(/\(([0-9a-f-]{36})\)/)?.[1],
    );
    await photograph(page, 'job-2001-children');

    // One status across every range: the failed child alone.
    await panel.locator('select[name="child-status"]').selectOption('failed');
    await expect
      .poll(() => panel.locator('.children-summary').getAttribute('data-children-matching'), {
        timeout: STATE_TIMEOUT,
      })
      .toBe('1');
    expect(await panel.locator('.child').getAttribute('data-child-index')).toBe(String(FAILING_ITEM));
    expect(errors).toEqual([]);
    await page.close();
  }, 180_000);
  it('says on a job page that its step waits in a queue no worker listens to', async () => {
    const id = await start('states-unheard');
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${id}`);
    // Once the step has waited a few seconds, the page looks at its queue.
    const note = page.locator(`.queue-note [data-unheard-queue="${queues.nobody}"]`);
    await note.waitFor({ timeout: 30_000 });
    expect(await note.textContent()).toMatch(/1 request waits, and no worker is listening/);
    await photograph(page, 'job-queue-unheard');
    await api('DELETE', `/api/job/${id}`);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a caller held up by its paused called job, and resumes that job from the caller', async () => {
    // Prepare: the called job paused on its own.
    const caller = await start('states-caller');
    const called = (await until(caller, 'the call to start', (document) => !!document.steps.pay?.job)).steps
      .pay?.job as string;
    await until(called, 'the called job to run', (document) => document.status === 'running');
    await api('POST', `/api/job/${called}/pause`);
    const { page, errors } = await openPage();

    // Act
    await page.goto(`${serve.url}/#/job/${caller}`);
    const wait = page.locator('.note-waiting [data-wait="paused-call"]');
    await wait.waitFor({ timeout: STATE_TIMEOUT });
    expect(await wait.textContent()).toContain(called.slice(0, 8));
    expect(await page.locator('.graph-card [data-step="pay"] .node-note').textContent()).toBe(
      'its called job is paused',
    );
    await photograph(page, 'job-caller-of-paused');
    await wait.getByRole('button', { name: 'Resume that job' }).click();

    // Assess: the called job runs again, and the caller's page no longer shows a wait.
    await until(called, 'the called job to resume', (document) => document.status === 'running');
    await page.locator('.note-waiting').waitFor({ state: 'detached', timeout: STATE_TIMEOUT });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
