import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { loadDashboard } from '../../functions/dashboard/load-dashboard.js';
import { type ServeHandle, startServe } from '../../functions/local/serve.js';
import { createJsonLogger } from '../../functions/telemetry/json-logger.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { buildDashboardAssets, type DashboardAsset } from '../../scripts/build-dashboard.js';
import { HeldRequests } from '../support/held-requests.js';
import { AMQP_URL, deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';

/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against `serve` on
 * the real RabbitMQ, with workers whose replies the test releases one by one.
 */
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts/dashboard');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Another site, for the attacks: its name resolves to this machine, as a DNS-rebinding name does.
  '--host-resolver-rules=MAP attacker.test 127.0.0.1',
  // Chromium alone asks before a page of the internet calls this machine (Local Network Access);
  // Firefox and Safari do not, so serve must refuse these attacks itself: tested as they see them.
  '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights',
];
const WORKFLOW = 'dashboard-e2e';
const TOKEN = 'local-token-for-the-dashboard-test';
const API_KEY = 'gateway-key-for-the-dashboard-test';
const STATE_TIMEOUT = 15_000;
/** Half the 15 s at which the workflow page's panels read again by themselves. */
const SOONER_THAN_A_REFRESH = 7_500;

// Queue names of this file's own (parallel test files must not take each other's messages).
const suffix = uniqueName('dash');
const queues = {
  prepare: `${suffix}-prepare`,
  handle: `${suffix}-handle`,
  finish: `${suffix}-finish`,
  notify: `${suffix}-notify`,
  limited: `${suffix}-limited`,
  replies: `${suffix}-replies`,
};

const workflowYaml = `workflows:
  - name: ${WORKFLOW}
    description: Prepares a list, handles each item, waits for approval, then finishes.
    steps:
      - name: prepare
        queue: ${queues.prepare}
      - name: handle-items
        task: handle-item
        depends: [prepare]
      - name: approve
        type: signal
        depends: [handle-items]
      - name: finish
        queue: ${queues.finish}
        depends: [approve]
    tasks:
      - name: handle-item
        itemListKey: items
        steps:
          - name: handle
            queue: ${queues.handle}
`;

const quiet = { info() {}, warn() {}, error: console.error };
const prepare = new HeldRequests();
const handle = new HeldRequests();
const finish = new HeldRequests();

let work: string;
let assets: Map<string, DashboardAsset>;
let serve: ServeHandle;
let tokenServe: ServeHandle;
let browser: BrowserContext;
let workers: Worker[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `chromium is not installed at ${CHROMIUM}; the dashboard tests need it: apt-get install -y chromium ` +
        '(or run scripts/ensure-test-services.sh)',
    );
  }
  work = await mkdtemp(join(tmpdir(), 'switchyard-dashboard-'));
  await mkdir(ARTIFACTS, { recursive: true });
  const configFile = join(work, 'workflows.yaml');
  await writeFile(configFile, workflowYaml);
  assets = await buildDashboardAssets();
  const logger = createJsonLogger({ level: 'error' });
  serve = await startServe({
    configFiles: [configFile],
    db: join(work, 'switchyard.db'),
    bus: 'rabbitmq',
    amqpUrl: AMQP_URL,
    replyQueue: queues.replies,
    port: 0,
    dashboard: assets,
    logger,
  });
  // The token test needs no worker: the in-memory bus keeps it off the broker.
  tokenServe = await startServe({
    configFiles: [configFile],
    db: join(work, 'with-token.db'),
    bus: 'memory',
    port: 0,
    token: TOKEN,
    dashboard: assets,
    logger,
  });
  workers = [
    createWorker({
      queue: queues.prepare,
      handler: prepare.handler,
      concurrency: 5,
      amqpUrl: AMQP_URL,
      logger: quiet,
    }),
    createWorker({
      queue: queues.handle,
      handler: handle.handler,
      concurrency: 3,
      amqpUrl: AMQP_URL,
      logger: quiet,
    }),
    createWorker({ queue: queues.finish, handler: finish.handler, amqpUrl: AMQP_URL, logger: quiet }),
  ];
  await Promise.all(workers.map((worker) => worker.start()));
  browser = await chromium.launchPersistentContext(join(work, 'chromium-profile'), {
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
});

afterAll(async () => {
  for (const held of [prepare, handle, finish]) held.releaseAll();
  await browser?.close();
  await Promise.all(workers.map((worker) => worker.stop()));
  await serve?.close();
  await tokenServe?.close();
  await deleteQueues(Object.values(queues));
  if (work) await rm(work, { recursive: true, force: true });
});

/** A fresh tab; the page's own errors fail the test that opened it. */
async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return { page, errors };
}

async function startJob(input: object = {}): Promise<string> {
  const response = await fetch(`${serve.url}/api/workflow/${WORKFLOW}`, {
    method: 'POST',
    body: JSON.stringify(input),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

async function jobDocument(id: string): Promise<JobDocument> {
  return (await (await fetch(`${serve.url}/api/job/${id}`)).json()) as JobDocument;
}

/** The state the job page's graph shows for a step ("absent" while it is not drawn). */
function stepState(page: Page, step: string): Promise<string> {
  return page
    .locator(`.graph-card [data-step="${step}"]`)
    .getAttribute('data-state', { timeout: 500 })
    .then((state) => state ?? 'none')
    .catch(() => 'absent');
}

async function expectStepState(page: Page, step: string, state: string): Promise<void> {
  await expect
    .poll(() => stepState(page, step), {
      timeout: STATE_TIMEOUT,
      message: `the graph should show step "${step}" ${state}`,
    })
    .toBe(state);
}

async function expectJobStatus(page: Page, status: string): Promise<void> {
  await expect
    .poll(
      () =>
        page
          .locator('.job-view')
          .getAttribute('data-job-status', { timeout: 500 })
          .catch(() => 'absent'),
      {
        timeout: STATE_TIMEOUT,
        message: `the job page should show the job ${status}`,
      },
    )
    .toBe(status);
}

/** How many replies the manager has ignored as not awaited (late, or for a finished job). */
async function ignoredReplies(): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`)).text();
  return Number(/replies_ignored_total\{reason="not_awaited"\} (\d+)/.exec(text)?.[1] ?? 0);
}

/** A full-page picture in test-artifacts/dashboard/, from the top, with the pointer out of the way. */
async function screenshot(page: Page, name: string): Promise<void> {
  await page.mouse.move(0, 0);
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

describe('Dashboard: in chromium against serve', () => {
  it('is what serve and the API function load: the page and its two assets', async () => {
    const loaded = await loadDashboard();
    expect([...(loaded?.keys() ?? [])].sort()).toEqual(['/', '/assets/app.css', '/assets/app.js']);
    const page = await fetch(`${serve.url}/`);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    // Everything is served from here, relative to the page: nothing from a CDN.
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).toMatch(/'assets\/app\.js\?v=[0-9a-f]{12}'/);
    const script = await fetch(`${serve.url}/assets/app.js`);
    expect(script.headers.get('content-type')).toContain('javascript');
    // The page runs under a policy that lets in only its own files and its inline script.
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self' 'sha256-[^']+';/);
  });

  it('shows each workflow with its versions, job counts and graph, tasks included', async () => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/`);
    const card = page.locator(`.workflow-card[data-workflow="${WORKFLOW}"]`);
    await card.locator('.graph').waitFor({ timeout: STATE_TIMEOUT });

    const nodes = await card
      .locator('.graph [data-node]')
      .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-node')));
    expect(nodes.sort()).toEqual([
      'step:approve',
      'step:finish',
      'step:handle-items',
      'step:prepare',
      'task:handle-item:handle',
    ]);
    expect(await card.locator('.graph .cluster').count()).toBe(1);
    expect(await card.locator('.graph .edge-fan-out').count()).toBe(1);
    expect(await card.locator('[data-count="running"]').textContent()).toMatch(/^\d+ running$/);
    expect(await card.locator('.workflow-version').textContent()).toContain('Version1');
    await screenshot(page, 'workflows');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('follows a running job: steps change state as replies arrive, fan-out children, a signal', async () => {
    // Prepare
    const { page, errors } = await openPage();
    const id = await startJob({ requestedBy: 'the dashboard test' });

    // Act and assess: the first step runs while its worker holds the request.
    await page.goto(`${serve.url}/#/job/${id}`);
    await expectStepState(page, 'prepare', 'running');
    expect(await stepState(page, 'handle-items')).toBe('waiting');
    expect(await stepState(page, 'finish')).toBe('waiting');
    await page.locator('[data-live="live"]').waitFor({ timeout: STATE_TIMEOUT });
    await screenshot(page, 'job-running');

    // The reply arrives: the step completes and the fan-out step runs, one child per item.
    const prepared = await prepare.take('the prepare request', (request) => request.jobId === id);
    expect(prepared.input).toEqual({ requestedBy: 'the dashboard test' });
    prepared.release({ items: [{ n: 1 }, { n: 2 }, { n: 3 }] });
    await expectStepState(page, 'prepare', 'completed');
    await expectStepState(page, 'handle-items', 'running');

    // One child finishes: the step shows 1 of 3 done, and links to each child.
    await page.locator('.graph-card [data-step="handle-items"]').click();
    const panel = page.locator('[data-step-panel="handle-items"]');
    await panel.waitFor({ timeout: STATE_TIMEOUT });
    await handle.waitForHeld('the three children at the handle worker', 3);
    (await handle.take('a child request')).release({ handled: true });
    const count = panel.locator('.children-count');
    await expect
      .poll(() => count.getAttribute('data-children-done', { timeout: 500 }).catch(() => null), {
        timeout: STATE_TIMEOUT,
        message: 'the step panel should count one child done',
      })
      .toBe('1');
    expect(await count.getAttribute('data-children-total')).toBe('3');
    await expect.poll(() => panel.locator('.child').count(), { timeout: STATE_TIMEOUT }).toBe(3);
    expect(await page.locator('.graph-card [data-step="handle-items"] .node-note').textContent()).toBe(
      '1/3 children',
    );
    await screenshot(page, 'job-fan-out');

    // The other two finish: the fan-out step completes and the signal step waits.
    for (let i = 0; i < 2; i++) (await handle.take('a child request')).release({ handled: true });
    await expectStepState(page, 'handle-items', 'completed');
    await expectStepState(page, 'approve', 'running');

    // A child's link opens the child job's page.
    const children = (await (
      await fetch(`${serve.url}/api/job/${id}/children?step=handle-items`)
    ).json()) as {
      children: { uuid: string; index: number }[];
    };
    const first = children.children.find((child) => child.index === 0);
    await panel.locator('.child[data-child-index="0"]').click();
    await page.locator(`.job-view[data-job="${first?.uuid}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await expectStepState(page, 'handle', 'completed');
    expect(await page.locator('.breadcrumbs').textContent()).toContain(id.slice(0, 8));
    await screenshot(page, 'job-child');
    await page.goBack();
    await page.locator(`.job-view[data-job="${id}"]`).waitFor({ timeout: STATE_TIMEOUT });

    // The signal step takes its output from the form.
    await page.locator('.graph-card [data-step="approve"]').click();
    const signal = page.locator('[data-step-panel="approve"] .signal-form');
    await signal.locator('textarea').fill('{"approved": true}');
    await signal.getByRole('button', { name: 'Send signal' }).click();
    await expectStepState(page, 'approve', 'completed');
    await expectStepState(page, 'finish', 'running');

    // The last reply completes the job.
    const finishing = await finish.take('the finish request', (request) => request.jobId === id);
    expect(finishing.input).toMatchObject({ approved: true });
    finishing.release({ finished: 'yes' });
    await expectJobStatus(page, 'completed');
    await expectStepState(page, 'finish', 'completed');
    await page.locator('.graph-card [data-step="finish"]').click();
    await expect
      .poll(
        () =>
          page
            .locator('[data-json="Output of finish"]')
            .textContent({ timeout: 500 })
            .catch(() => ''),
        {
          timeout: STATE_TIMEOUT,
        },
      )
      .toContain('"finished": "yes"');
    expect(await page.locator('[data-live]').count()).toBe(0);
    await screenshot(page, 'job-completed');

    // A narrow window: one column, nothing wider than the window.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'job-narrow');
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it('cancels a running job, and retries it', async () => {
    const { page, errors } = await openPage();
    const id = await startJob();
    await page.goto(`${serve.url}/#/job/${id}`);
    await expectStepState(page, 'prepare', 'running');

    await page.getByRole('button', { name: 'Cancel job' }).click();
    await page.getByRole('button', { name: 'Yes, cancel' }).click();

    await expectJobStatus(page, 'cancelled');
    await expectStepState(page, 'prepare', 'cancelled');
    expect(await page.locator('.job-header .badge').first().textContent()).toBe('Cancelled');
    expect(await page.getByRole('button', { name: 'Retry job' }).isVisible()).toBe(true);
    expect((await jobDocument(id)).status).toBe('cancelled');
    await screenshot(page, 'job-cancelled');
    // The worker still holds the request (cancel cannot recall it); its late reply is ignored.
    // Wait until the manager has ignored it, so it cannot meet the retried attempt.
    const ignoredBefore = await ignoredReplies();
    (await prepare.take("the cancelled job's request", (request) => request.jobId === id)).release({
      items: [],
    });
    await eventually('the late reply to be ignored', async () => (await ignoredReplies()) > ignoredBefore);

    await page.getByRole('button', { name: 'Retry job' }).click();
    await expectJobStatus(page, 'running');
    await expectStepState(page, 'prepare', 'running');
    await page.locator('[data-live="live"]').waitFor({ timeout: STATE_TIMEOUT });
    const again = await prepare.take('the retried request', (request) => request.jobId === id);
    await fetch(`${serve.url}/api/job/${id}`, { method: 'DELETE' });
    await expectJobStatus(page, 'cancelled');
    again.release({ items: [] });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('pauses a running job, and resumes it', async () => {
    const { page, errors } = await openPage();
    const id = await startJob();
    await page.goto(`${serve.url}/#/job/${id}`);
    await expectStepState(page, 'prepare', 'running');

    await page.getByRole('button', { name: 'Pause job' }).click();
    await expectJobStatus(page, 'paused');
    expect(await page.locator('.job-header .badge').first().textContent()).toBe('Paused');
    expect((await jobDocument(id)).status).toBe('paused');
    expect(await page.getByRole('button', { name: 'Cancel job' }).isVisible()).toBe(true);
    await screenshot(page, 'job-paused');

    await page.getByRole('button', { name: 'Resume job' }).click();
    await expectJobStatus(page, 'running');
    expect((await jobDocument(id)).status).toBe('running');
    expect(await page.getByRole('button', { name: 'Pause job' }).isVisible()).toBe(true);
    const held = await prepare.take('the request', (request) => request.jobId === id);
    await fetch(`${serve.url}/api/job/${id}`, { method: 'DELETE' });
    await expectJobStatus(page, 'cancelled');
    // The job's history lists what happened and who did it (root: serve runs without a token here).
    const history = page.getByRole('region', { name: 'History' });
    await history.locator('tr[data-kind="job.cancelled"]').waitFor();
    for (const kind of ['job.created', 'job.paused', 'job.resumed', 'job.cancelled']) {
      expect(await history.locator(`tr[data-kind="${kind}"] .history-who`).textContent()).toBe('root');
    }
    expect(await history.locator('tr[data-kind="step.requested"]').first().textContent()).toContain(
      'prepare #1',
    );
    held.release({ items: [] });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows a failed job's error, on the job and on its step", async () => {
    const { page, errors } = await openPage();
    const id = await startJob();
    await page.goto(`${serve.url}/#/job/${id}`);
    await expectStepState(page, 'prepare', 'running');

    (await prepare.take('the request to fail', (request) => request.jobId === id)).fail(
      'the list of items is not ready',
    );

    await expectJobStatus(page, 'failed');
    await expectStepState(page, 'prepare', 'failed');
    expect(await page.locator('.job-error').textContent()).toContain('the list of items is not ready');
    expect(await page.locator('[data-step-panel="prepare"] .step-error').textContent()).toContain(
      'the list of items is not ready',
    );
    expect(await page.getByRole('button', { name: 'Retry job' }).isVisible()).toBe(true);
    await screenshot(page, 'job-failed');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('shows skipped steps with their condition, a handled failure apart from failures, and a call with its links', async () => {
    // Prepare: a workflow whose charge may fail without failing the job, registered as users do.
    const flow = `${WORKFLOW}-flow`;
    const helper = `${WORKFLOW}-helper`;
    const put = (name: string, yaml: string) =>
      fetch(`${serve.url}/api/workflow/${name}`, { method: 'PUT', body: yaml }).then(
        (answer) => answer.status,
      );
    expect(
      await put(
        helper,
        `workflows:\n  - name: ${helper}\n    steps:\n      - name: noop\n        when: 'false'\n`,
      ),
    ).toBe(201);
    expect(
      await put(
        flow,
        `workflows:
  - name: ${flow}
    steps:
      - name: charge
        queue: ${queues.prepare}
        continueOnError: true
        params: { currency: EUR }
      - name: big-order
        queue: ${queues.finish}
        when: input.total > 100
      - name: refund
        type: signal
        depends: [charge]
        when: has(input.error)
      - name: ship
        queue: ${queues.finish}
        depends: [charge]
        when: '!has(input.error)'
      - name: notify
        workflow: ${helper}
        depends: [refund]
`,
      ),
    ).toBe(201);
    const { page, errors } = await openPage();
    const started = await fetch(`${serve.url}/api/workflow/${flow}`, {
      method: 'POST',
      body: '{"total": 40}',
    });
    const id = ((await started.json()) as { id: string }).id;

    // Act: the charge is sent with its params, and fails for good.
    await page.goto(`${serve.url}/#/job/${id}`);
    await expectStepState(page, 'charge', 'running');
    const charge = await prepare.take('the charge request', (request) => request.jobId === id);
    expect(charge.input).toEqual({ total: 40, currency: 'EUR' });
    charge.fail('card declined');

    // Assess: the job goes on: the charge failed but was handled, the handler branch runs, the rest skipped.
    await expectStepState(page, 'refund', 'running');
    // refund is a signal step: the job waits for someone.
    await expectJobStatus(page, 'waiting');
    const node = (step: string) => page.locator(`.graph-card [data-step="${step}"]`);
    expect(await stepState(page, 'charge')).toBe('failed');
    expect(await node('charge').getAttribute('data-handled')).toBe('true');
    expect(await node('charge').getAttribute('class')).toContain('state-handled');
    expect(await node('charge').locator('.node-note').textContent()).toBe('failed · handled');
    expect(await stepState(page, 'big-order')).toBe('skipped');
    expect(await node('big-order').getAttribute('class')).toContain('state-skipped');
    expect(await node('big-order').locator('title').textContent()).toContain('input.total > 100 is false');
    expect(await stepState(page, 'ship')).toBe('skipped');
    expect(await page.locator('.graph-card .edge-error').count()).toBe(1);
    expect(await node('notify').getAttribute('class')).toContain('kind-call');
    expect(await page.locator('.legend').textContent()).toContain('failed · handled');

    // The step panels: the handled error and what was sent; the skipped step's condition and reason.
    await node('charge').click();
    const chargePanel = page.locator('[data-step-panel="charge"]');
    await chargePanel.locator('.tag-handled').waitFor({ timeout: STATE_TIMEOUT });
    expect(await chargePanel.locator('.step-error').textContent()).toContain('card declined');
    expect(await chargePanel.locator('[data-json="Input of charge"]').textContent()).toContain('"currency"');
    expect(await chargePanel.locator('[data-json="Output of charge"]').textContent()).toContain(
      'card declined',
    );
    await screenshot(page, 'job-control-flow');
    await node('big-order').click();
    const skippedPanel = page.locator('[data-step-panel="big-order"]');
    await skippedPanel.locator('.step-skipped').waitFor({ timeout: STATE_TIMEOUT });
    expect(await skippedPanel.locator('.step-when').textContent()).toBe('input.total > 100');
    expect(await skippedPanel.locator('.step-skipped').textContent()).toContain('"when" is false');

    // The refund signal lets the call run: a job of the helper workflow, linked both ways.
    await fetch(`${serve.url}/api/job/${id}/signal/refund`, { method: 'POST', body: '{"refunded": true}' });
    await expectJobStatus(page, 'completed');
    await expectStepState(page, 'notify', 'completed');
    const called = (await jobDocument(id)).steps.notify?.job;
    expect(called).toBeDefined();
    await page.locator(`.graph-card [data-called-job="${called}"]`).click();
    await page.locator(`.job-view[data-job="${called}"]`).waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('[data-link="called-by"]').textContent()).toContain(id.slice(0, 8));
    await expectStepState(page, 'noop', 'skipped');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('lists jobs newest first, filtered by status and workflow', async () => {
    const { page, errors } = await openPage();
    const older = await startJob();
    const newer = await startJob();
    await fetch(`${serve.url}/api/job/${newer}`, { method: 'DELETE' });

    const rows = async (hash: string) => {
      await page.goto(`${serve.url}/${hash}`);
      await page.locator('.jobs-table, .empty-row').first().waitFor({ timeout: STATE_TIMEOUT });
      return page
        .locator('.jobs-table tbody tr')
        .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-job')));
    };
    const all = await rows(`#/jobs?workflow=${WORKFLOW}`);
    expect(all.indexOf(newer)).toBeGreaterThanOrEqual(0);
    expect(all.indexOf(newer)).toBeLessThan(all.indexOf(older));
    const cancelled = await rows(`#/jobs?workflow=${WORKFLOW}&status=cancelled`);
    expect(cancelled).toContain(newer);
    expect(cancelled).not.toContain(older);
    const running = await rows(`#/jobs?workflow=${WORKFLOW}&status=running`);
    expect(running).toContain(older);
    expect(running).not.toContain(newer);

    await page.goto(`${serve.url}/#/jobs?workflow=${WORKFLOW}`);
    await page.locator(`.jobs-table tr[data-job="${newer}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await screenshot(page, 'jobs');
    await page.locator(`.jobs-table tr[data-job="${older}"] a.mono`).click();
    await page.locator(`.job-view[data-job="${older}"]`).waitFor({ timeout: STATE_TIMEOUT });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows a workflow's versions, each with its own graph", async () => {
    // Prepare: a second version with one more step.
    const second = workflowYaml.replace(
      `        depends: [approve]\n`,
      `        depends: [approve]\n      - name: notify\n        queue: ${queues.notify}\n        depends: [finish]\n`,
    );
    const put = await fetch(`${serve.url}/api/workflow/${WORKFLOW}`, { method: 'PUT', body: second });
    expect(put.status).toBe(201);
    const { page, errors } = await openPage();
    const card = page.locator(`.workflow-card[data-workflow="${WORKFLOW}"]`);
    const nodes = () =>
      card
        .locator('.graph [data-node]')
        .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-node')));

    // Act and assess: the latest version first, then the one before it.
    await page.goto(`${serve.url}/`);
    await card.locator('.graph [data-node="step:notify"]').waitFor({ timeout: STATE_TIMEOUT });
    const select = card.locator('.workflow-version select');
    expect(await select.locator('option').allTextContents()).toEqual(['2 (latest)', '1']);
    await screenshot(page, 'workflow-versions');
    await select.selectOption('1');
    // The graph is briefly empty while version 1's definition loads, so wait for the drawn graph.
    await expect
      .poll(
        async () => {
          const drawn = await nodes();
          return drawn.includes('step:finish') && !drawn.includes('step:notify');
        },
        { timeout: STATE_TIMEOUT, message: 'version 1 is drawn with finish and without notify' },
      )
      .toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a workflow's page: counts, graph, versions with their diff, recent jobs, and starts a job from its form", async () => {
    // Prepare: the versions test before this one registered version 2 (a notify step more).
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/`);
    await page.locator(`.workflow-card[data-workflow="${WORKFLOW}"] h2 a`).click();
    const view = page.locator(`.workflow-view[data-workflow="${WORKFLOW}"]`);
    await view.locator('.graph [data-node="step:notify"]').waitFor({ timeout: STATE_TIMEOUT });
    expect(new URL(page.url()).hash).toBe(`#/workflow/${WORKFLOW}`);
    expect(await view.locator('[data-count="running"]').textContent()).toMatch(/^\d+ running$/);
    expect(
      await view
        .locator('.version-list li')
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-version'))),
    ).toEqual(['2', '1']);

    // The diff of version 1 with version 2: the notify step added, nothing removed but a bracket.
    const diff = view.locator('.diff[data-diff="1..2"]');
    await diff.waitFor({ timeout: STATE_TIMEOUT });
    expect(Number(await diff.getAttribute('data-added'))).toBeGreaterThan(0);
    expect(await diff.locator('.diff-added').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('"name": "notify"')]),
    );

    // The form refuses what is not a JSON object, before sending anything.
    const form = view.locator('form.start-job');
    const textarea = form.locator('textarea[name="input"]');
    await textarea.fill('{"requestedBy": }');
    expect(await form.locator('.input-verdict').getAttribute('data-valid')).toBe('false');
    expect(await form.locator('.input-verdict').textContent()).toMatch(/^Not JSON/);
    expect(await form.getByRole('button', { name: 'Start job' }).isDisabled()).toBe(true);
    await textarea.fill('[1, 2]');
    expect(await form.locator('.input-verdict').textContent()).toContain('must be a JSON object');
    await textarea.fill('{"requestedBy": "the start form"}');
    expect(await form.locator('.input-verdict').getAttribute('data-valid')).toBe('true');

    // Act: start it.
    await form.getByRole('button', { name: 'Start job' }).click();
    const link = form.locator('.started-job a');
    await link.waitFor({ timeout: STATE_TIMEOUT });
    const id = String(await link.getAttribute('data-started-job'));

    // Assess: the job runs with that input, shows among the recent jobs, and its link opens it.
    const started = await jobDocument(id);
    expect(started.input).toEqual({ requestedBy: 'the start form' });
    expect(started.version).toBe(2);
    await view.locator(`.recent-jobs tr[data-job="${id}"]`).waitFor({ timeout: STATE_TIMEOUT });
    // The step queues as the broker sees them: each queue of the workflow, with its steps.
    const queueRow = view.locator(`.queues-panel tr[data-queue="${queues.prepare}"]`);
    await queueRow.waitFor({ timeout: STATE_TIMEOUT });
    expect(await queueRow.locator('td').last().textContent()).toContain('prepare');
    await screenshot(page, 'workflow-page');
    await link.click();
    await page.locator(`.job-view[data-job="${id}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await expectStepState(page, 'prepare', 'running');
    await fetch(`${serve.url}/api/job/${id}`, { method: 'DELETE' });
    await expectJobStatus(page, 'cancelled');
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("shows a workflow's schedules with their next ticks and its scheduled jobs, and schedules a job from its form", async () => {
    // Prepare: a workflow with two schedules (a signal step: nothing goes to a queue), and a job for in an hour.
    const name = `${WORKFLOW}-scheduled`;
    const registered = await fetch(`${serve.url}/api/workflow/${name}`, {
      method: 'PUT',
      body: `name: ${name}
steps:
  - { name: wait, type: signal }
schedules:
  - { cron: "0 6 * * 1-5", timezone: Europe/Paris }
  - { cron: "*/15 * * * *", catchUp: latest }
`,
    });
    expect(registered.status).toBe(201);
    const inAnHour = new Date(Math.ceil(Date.now() / 1000) * 1000 + 3_600_000).toISOString();
    const scheduled = (await (
      await fetch(`${serve.url}/api/workflow/${name}?at=${inAnHour}`, { method: 'POST', body: '{}' })
    ).json()) as { id: string };
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/workflow/${name}`);
    const view = page.locator(`.workflow-view[data-workflow="${name}"]`);

    // Assess: each schedule with three next ticks, the scheduled job, and its count.
    const panel = view.locator('.schedules-panel');
    await panel.locator('tr[data-schedule]').first().waitFor({ timeout: STATE_TIMEOUT });
    expect(await panel.locator('tr[data-schedule] td.mono').allTextContents()).toEqual([
      '0 6 * * 1-5',
      '*/15 * * * *',
    ]);
    expect(await panel.locator('tr[data-schedule]').first().locator('.next-tick').count()).toBe(3);
    const quarter = await panel
      .locator('tr[data-schedule]')
      .nth(1)
      .locator('.next-tick')
      .first()
      .getAttribute('data-tick');
    expect(new Date(String(quarter)).getUTCMinutes() % 15).toBe(0);
    await panel.locator(`.scheduled-jobs tr[data-job="${scheduled.id}"]`).waitFor({ timeout: STATE_TIMEOUT });
    expect(
      await panel.locator(`.scheduled-jobs tr[data-job="${scheduled.id}"] time`).getAttribute('datetime'),
    ).toBe(inAnHour);
    expect(await view.locator('[data-count="scheduled"]').textContent()).toBe('1 scheduled');

    // Act: the form schedules a job for tomorrow (a local time, as the browser reads it).
    const [local, expectedAt] = (await page.evaluate(`(() => {
      const at = new Date(Date.now() + 86400000);
      at.setSeconds(0, 0);
      const pad = (n) => String(n).padStart(2, '0');
      const local = at.getFullYear() + '-' + pad(at.getMonth() + 1) + '-' + pad(at.getDate()) + 'T' + pad(at.getHours()) + ':' + pad(at.getMinutes());
      return [local, at.toISOString()];
    })()`)) as [string, string];
    const form = view.locator('form.start-job');
    await form.locator('textarea[name="input"]').fill('{"from": "the form"}');
    await form.locator('input[name="at"]').fill(local);
    await form.getByRole('button', { name: 'Schedule job' }).click();
    const link = form.locator('.started-job a');
    await link.waitFor({ timeout: STATE_TIMEOUT });
    expect(await form.locator('.started-job').textContent()).toMatch(/^Scheduled job/);
    const id = String(await link.getAttribute('data-started-job'));
    await screenshot(page, 'workflow-schedules');

    // Assess: the job waits for that time, with that input; both scheduled jobs cancel.
    expect(await jobDocument(id)).toMatchObject({
      status: 'scheduled',
      startAt: expectedAt,
      input: { from: 'the form' },
    });
    // At once: well before the panel's own refresh (every 15 s), which it once waited for.
    await view.locator(`.scheduled-jobs tr[data-job="${id}"]`).waitFor({ timeout: SOONER_THAN_A_REFRESH });
    // Its page says when it starts.
    await link.click();
    await page.locator(`.job-view[data-job="${id}"] .job-start-at time`).waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('.job-start-at time').getAttribute('datetime')).toBe(expectedAt);
    // The workflows list counts them too; a workflow with none shows no scheduled count.
    await page.goto(`${serve.url}/#/`);
    const card = page.locator(`.workflow-card[data-workflow="${name}"]`);
    await card.locator('[data-count="scheduled"]').waitFor({ timeout: STATE_TIMEOUT });
    expect(await card.locator('[data-count="scheduled"]').textContent()).toBe('2 scheduled');
    const other = page.locator(`.workflow-card[data-workflow="${WORKFLOW}"]`);
    await other.locator('[data-count="running"]').waitFor({ timeout: STATE_TIMEOUT });
    expect(await other.locator('[data-count="scheduled"]').count()).toBe(0);
    for (const job of [id, scheduled.id]) {
      expect((await fetch(`${serve.url}/api/job/${job}`, { method: 'DELETE' })).status).toBe(200);
      expect((await jobDocument(job)).status).toBe('cancelled');
    }
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('searches jobs by id (a prefix, a whole id) and by an input field, with an error column', async () => {
    // Prepare: two jobs told apart by their input; bob's fails.
    const { page, errors } = await openPage();
    const ada = await startJob({ customer: { name: 'ada' }, express: true });
    const bob = await startJob({ customer: { name: 'bob' } });
    (await prepare.take("bob's request", (request) => request.jobId === bob)).fail(
      'card declined for bob: the issuing bank refused the payment',
    );
    await eventually('bob to fail', async () => (await jobDocument(bob)).status === 'failed');
    const rows = () =>
      page
        .locator('.jobs-table tbody tr')
        .evaluateAll((elements) => elements.map((element) => element.getAttribute('data-job')));
    const search = page.locator('form.job-search');

    // Act and assess: the input field, typed into the form.
    await page.goto(`${serve.url}/#/jobs?workflow=${WORKFLOW}`);
    await page.locator(`.jobs-table tr[data-job="${ada}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await search.locator('input[name="input"]').fill('customer.name=bob');
    await search.getByRole('button', { name: 'Search' }).click();
    await expect.poll(rows, { timeout: STATE_TIMEOUT }).toEqual([bob]);
    expect(new URL(page.url()).hash).toContain('input=customer.name%3Dbob');
    expect(await page.locator('.search-note').getAttribute('data-search-shown')).toBe('1');
    const error = page.locator(`.jobs-table tr[data-job="${bob}"] .job-row-error`);
    expect(await error.textContent()).toContain('prepare: card declined for bob');
    expect(await error.getAttribute('title')).toBe(
      'card declined for bob: the issuing bank refused the payment',
    );
    await screenshot(page, 'jobs-search');

    // A key alone, and a value as JSON.
    await page.goto(`${serve.url}/#/jobs?workflow=${WORKFLOW}&input=express%3Dtrue`);
    await expect.poll(rows, { timeout: STATE_TIMEOUT }).toEqual([ada]);

    // An id prefix, matched among the page's jobs.
    await page.goto(`${serve.url}/#/jobs?workflow=${WORKFLOW}`);
    await page.locator(`.jobs-table tr[data-job="${ada}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await search.locator('input[name="id"]').fill(ada.slice(0, 8));
    await search.getByRole('button', { name: 'Search' }).click();
    await expect.poll(rows, { timeout: STATE_TIMEOUT }).toEqual([ada]);

    // A whole id is looked up, whatever the filters; a word is refused before searching.
    await page.goto(`${serve.url}/#/jobs?status=completed&id=${bob.toUpperCase()}`);
    await expect.poll(rows, { timeout: STATE_TIMEOUT }).toEqual([bob]);
    await search.locator('input[name="id"]').fill('not an id');
    expect(await search.getByRole('button', { name: 'Search' }).isDisabled()).toBe(true);

    // The failed filter lists bob's job and not ada's, with its error.
    const failed = async () => {
      await page.goto(`${serve.url}/#/jobs?workflow=${WORKFLOW}&status=failed`);
      await page.locator(`.jobs-table tr[data-job="${bob}"]`).waitFor({ timeout: STATE_TIMEOUT });
      return rows();
    };
    expect(await failed()).not.toContain(ada);
    await fetch(`${serve.url}/api/job/${ada}`, { method: 'DELETE' });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it('lists every attempt of a retried step and draws the timeline of the steps', async () => {
    // Prepare: a step retried once, then a second step.
    const flow = `${WORKFLOW}-retried`;
    const put = await fetch(`${serve.url}/api/workflow/${flow}`, {
      method: 'PUT',
      body: `workflows:
  - name: ${flow}
    steps:
      - name: flaky
        queue: ${queues.prepare}
        retries: 2
      - name: after
        queue: ${queues.finish}
        depends: [flaky]
`,
    });
    expect(put.status).toBe(201);
    const started = await fetch(`${serve.url}/api/workflow/${flow}`, { method: 'POST', body: '{}' });
    const id = ((await started.json()) as { id: string }).id;
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${id}?step=flaky`);
    await expectStepState(page, 'flaky', 'running');

    // Act: the first attempt fails, the second completes, then the last step.
    (await prepare.take('the first attempt', (request) => request.jobId === id)).fail('the first try failed');
    const panel = page.locator('[data-step-panel="flaky"]');
    await panel.locator('.attempts tr[data-attempt="2"]').waitFor({ timeout: STATE_TIMEOUT });
    await screenshot(page, 'job-attempt-running');
    (await prepare.take('the second attempt', (request) => request.jobId === id)).release({ tried: 2 });
    (await finish.take('the last step', (request) => request.jobId === id)).release({});
    await expectJobStatus(page, 'completed');

    // Assess: both attempts in the step panel, oldest first, with how each ended.
    const attempts = panel.locator('.attempts tbody tr');
    await expect
      .poll(() => attempts.evaluateAll((rows) => rows.map((row) => row.getAttribute('data-outcome'))), {
        timeout: STATE_TIMEOUT,
      })
      .toEqual(['error', 'completed']);
    expect(await attempts.first().locator('.attempt-error').textContent()).toContain('the first try failed');

    // The timeline: a bar per step, flaky's with a segment per attempt, after's after it.
    const timeline = page.locator('.timeline-card');
    const flaky = timeline.locator('[data-timeline-step="flaky"]');
    expect(await flaky.getAttribute('data-attempts')).toBe('2');
    expect(
      await flaky
        .locator('.timeline-segment')
        .evaluateAll((segments) => segments.map((segment) => segment.getAttribute('data-outcome'))),
    ).toEqual(['error', 'completed']);
    const box = async (selector: string) =>
      (await timeline.locator(selector).boundingBox()) as { x: number; width: number };
    const flakyBar = await box('[data-timeline-step="flaky"] .timeline-bar');
    const afterBar = await box('[data-timeline-step="after"] .timeline-bar');
    expect(afterBar.x).toBeGreaterThanOrEqual(flakyBar.x + flakyBar.width - 4);
    expect(await timeline.locator('.timeline-tick').count()).toBeGreaterThan(1);
    await screenshot(page, 'job-attempts-timeline');

    // A bar selects its step.
    await timeline.locator('[data-timeline-step="after"]').click();
    await page.locator('[data-step-panel="after"]').waitFor({ timeout: STATE_TIMEOUT });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("links a fan-out's first failed child, lists failed children only, and Updated moves as children finish", async () => {
    // Prepare: three children, held at the handle worker.
    const { page, errors } = await openPage();
    const id = await startJob({ requestedBy: 'the failed-child test' });
    await page.goto(`${serve.url}/#/job/${id}?step=handle-items`);
    (await prepare.take('the prepare request', (request) => request.jobId === id)).release({
      items: [{ n: 1 }, { n: 2 }, { n: 3 }],
    });
    await expectStepState(page, 'handle-items', 'running');
    const { children } = (await (
      await fetch(`${serve.url}/api/job/${id}/children?step=handle-items`)
    ).json()) as { children: { uuid: string; index: number }[] };
    const byIndex = (index: number) => children.find((child) => child.index === index)?.uuid as string;
    const ours = (request: { jobId: string }) => children.some((child) => child.uuid === request.jobId);
    const updated = () =>
      page
        .locator('.job-updated time')
        .getAttribute('datetime', { timeout: 1000 })
        .catch(() => '');
    await expect.poll(updated, { timeout: STATE_TIMEOUT }).not.toBe('');
    const before = String(await updated());

    // Act: child 0 completes (its counter moves; the job's own revision need not); then child 2 fails.
    await page.waitForTimeout(1100);
    (await handle.take('child 0', (request) => request.jobId === byIndex(0))).release({ handled: true });
    await expect
      .poll(async () => Date.parse(String(await updated())), {
        timeout: STATE_TIMEOUT,
        message: '"Updated" should move when a child finishes',
      })
      .toBeGreaterThan(Date.parse(before));
    (await handle.take('child 2', (request) => request.jobId === byIndex(2))).fail('item 3 is broken');

    // Assess: a link to the first failed child, and the failed children alone on request.
    const panel = page.locator('[data-step-panel="handle-items"]');
    const first = panel.locator('.first-failed');
    await first.waitFor({ timeout: STATE_TIMEOUT });
    expect(await first.getAttribute('data-first-failed')).toBe(byIndex(2));
    expect(await first.textContent()).toContain('#2');
    await panel.locator('select[name="child-status"]').selectOption('failed');
    await expect
      .poll(
        () =>
          panel
            .locator('.child')
            .evaluateAll((links) => links.map((link) => link.getAttribute('data-child-index'))),
        {
          timeout: STATE_TIMEOUT,
        },
      )
      .toEqual(['2']);
    await screenshot(page, 'job-first-failed-child');
    await first.click();
    await page.locator(`.job-view[data-job="${byIndex(2)}"]`).waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('.job-error, [data-step-panel] .step-error').first().textContent()).toContain(
      'item 3 is broken',
    );
    // The last child may still be held: let it go, and end the job.
    const last = await handle.take('child 1', ours, 2000).catch(() => undefined);
    last?.release({ handled: true });
    await fetch(`${serve.url}/api/job/${id}`, { method: 'DELETE' });
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("asks for serve's token, sends it as a bearer token, and keeps it for the tab", async () => {
    const { page } = await openPage();
    const sent: (string | undefined)[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/workflows')) sent.push(request.headers().authorization);
    });
    await page.goto(`${tokenServe.url}/`);
    const prompt = page.locator('.auth-card[data-auth-kind="token"]');
    await prompt.waitFor({ timeout: STATE_TIMEOUT });
    await screenshot(page, 'auth-token');

    await prompt.locator('input[name="credential"]').fill('not-the-token');
    await prompt.getByRole('button', { name: 'Continue' }).click();
    await page.locator('.auth-card .note-error').waitFor({ timeout: STATE_TIMEOUT });

    await page.locator('.auth-card input[name="credential"]').fill(TOKEN);
    await page.locator('.auth-card').getByRole('button', { name: 'Continue' }).click();
    await page
      .locator(`.workflow-card[data-workflow="${WORKFLOW}"] .graph`)
      .waitFor({ timeout: STATE_TIMEOUT });
    expect(sent.at(-1)).toBe(`Bearer ${TOKEN}`);
    expect(
      JSON.parse(String(await page.evaluate("sessionStorage.getItem('switchyard.credential')"))),
    ).toEqual({
      kind: 'token',
      value: TOKEN,
    });

    await page.reload();
    await page
      .locator(`.workflow-card[data-workflow="${WORKFLOW}"] .graph`)
      .waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('.auth-card').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('takes a token of one namespace to that namespace: its workflows only, the picker showing it', async () => {
    // Prepare: a workflow in team-a and a read token of team-a, made with the root token.
    const root = { authorization: `Bearer ${TOKEN}` };
    const put = await fetch(`${tokenServe.url}/api/ns/team-a/workflow/ledger`, {
      method: 'PUT',
      headers: root,
      body: 'name: ledger\nsteps:\n  - name: post\n',
    });
    expect(put.status).toBe(201);
    const created = await fetch(`${tokenServe.url}/api/tokens`, {
      method: 'POST',
      headers: { ...root, 'content-type': 'application/json' },
      body: JSON.stringify({ namespace: 'team-a', role: 'read', description: 'dashboard' }),
    });
    const { secret } = (await created.json()) as { secret: string };
    const { page } = await openPage();
    // Act
    await page.goto(`${tokenServe.url}/`);
    await page.locator('.auth-card input[name="credential"]').fill(secret);
    await page.locator('.auth-card').getByRole('button', { name: 'Continue' }).click();
    // Assess
    await page.locator('.workflow-card[data-workflow="ledger"]').waitFor({ timeout: STATE_TIMEOUT });
    expect(new URL(page.url()).hash).toBe('#/ns/team-a/');
    expect(await page.locator('select[aria-label="Namespace"]').inputValue()).toBe('team-a');
    expect(await page.locator(`.workflow-card[data-workflow="${WORKFLOW}"]`).count()).toBe(0);
    await screenshot(page, 'namespace-token');
    await page.close();
  }, 60_000);

  it('behind API Gateway: asks for the API key and calls the API under the stage path', async () => {
    // Prepare: the page at /prod/, as API Gateway serves it, refusing API calls without the key.
    const { page, errors } = await openPage();
    const outsideStage: string[] = [];
    const keys: (string | undefined)[] = [];
    const origin = new URL(serve.url).origin;
    await page.route(
      (url) => url.origin === origin,
      async (route) => {
        const request = route.request();
        const url = new URL(request.url());
        if (url.pathname !== '/prod' && !url.pathname.startsWith('/prod/')) {
          outsideStage.push(url.pathname);
          return route.fulfill({
            status: 403,
            contentType: 'application/json',
            body: '{"message":"Forbidden"}',
          });
        }
        const path = url.pathname.slice('/prod'.length) || '/';
        if (path.startsWith('/api/')) {
          keys.push(request.headers()['x-api-key']);
          if (request.headers()['x-api-key'] !== API_KEY) {
            return route.fulfill({
              status: 403,
              contentType: 'application/json',
              body: '{"error":{"code":"INVALID_API_KEY","message":"Forbidden"}}',
            });
          }
        }
        return route.fulfill({ response: await route.fetch({ url: `${origin}${path}${url.search}` }) });
      },
    );

    // Act: open the stage URL without its trailing slash, as people type it.
    await page.goto(`${origin}/prod`);
    const prompt = page.locator('.auth-card[data-auth-kind="api-key"]');
    await prompt.waitFor({ timeout: STATE_TIMEOUT });
    expect(new URL(page.url()).pathname).toBe('/prod/');
    await prompt.locator('input[name="credential"]').fill(API_KEY);
    await prompt.getByRole('button', { name: 'Continue' }).click();

    // Assess
    await page
      .locator(`.workflow-card[data-workflow="${WORKFLOW}"] .graph`)
      .waitFor({ timeout: STATE_TIMEOUT });
    expect(keys.at(-1)).toBe(API_KEY);
    expect(outsideStage).toEqual([]);
    expect(errors.filter((error) => !error.includes('403'))).toEqual([]);
    await screenshot(page, 'auth-api-key');
    await page.close();
  }, 60_000);
});

/** Jobs of every status the open serve holds, counted through the API. */
async function jobTotal(): Promise<number> {
  const workflows = (await (await fetch(`${serve.url}/api/workflows`)).json()) as {
    jobs: Record<string, number>;
  }[];
  return workflows.reduce(
    (sum, workflow) => sum + Object.values(workflow.jobs).reduce((a, b) => a + b, 0),
    0,
  );
}

/** A page of another site, given `html`, at `url`. */
async function attackerPage(url: string, html: string): Promise<Page> {
  const { page } = await openPage();
  await page.route(url, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: html }));
  await page.goto(url);
  return page;
}

describe('Another site in chromium, against a serve without a token', () => {
  it('cannot start a job with a no-cors text/plain fetch nor with a form post, nor read the API', async () => {
    const before = await jobTotal();
    const target = `${serve.url}/api/workflow/${WORKFLOW}`;
    const page = await attackerPage(
      'http://attacker.test/',
      `<form method="POST" action="${target}" enctype="text/plain"><input name='{"from":"a form","x":"' value='"}'></form>`,
    );

    // A fetch that needs no preflight: the page cannot read the answer, but serve used to act on it.
    const refusedFetch = page.waitForResponse((response) => response.url() === target);
    await page.evaluate(
      `fetch(${JSON.stringify(target)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"from":"a fetch"}' })`,
    );
    expect((await refusedFetch).status()).toBe(403);

    // A read with CORS: refused by serve, and unreadable to the page.
    const read = await page.evaluate(
      `fetch(${JSON.stringify(`${serve.url}/api/jobs`)}).then((r) => 'read ' + r.status, (e) => 'failed: ' + e.message)`,
    );
    expect(read).toMatch(/^failed/);

    // A form post: a top-level navigation, with the visitor's browser sending it.
    const refusedForm = page.waitForResponse((response) => response.url() === target);
    await page.evaluate('document.forms[0].submit()');
    expect((await refusedForm).status()).toBe(403);

    expect(await jobTotal()).toBe(before);
    await page.close();
  });

  it('cannot read or write through a rebound name (DNS rebinding: the page on attacker.test, at serve)', async () => {
    const before = await jobTotal();
    const port = new URL(serve.url).port;
    // The page came from the attacker's server; its name now resolves to 127.0.0.1, so its requests
    // reach serve, same-origin in the browser's eyes.
    const page = await attackerPage(`http://attacker.test:${port}/`, '<p>hello</p>');
    const results = await page.evaluate(`Promise.all([
      fetch('/api/workflows').then((r) => r.status),
      fetch('/api/workflow/${WORKFLOW}', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.status),
      fetch('/api/workflow/rebound', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"workflows":[{"name":"rebound","steps":[{"name":"a"}]}]}' }).then((r) => r.status),
    ])`);
    expect(results).toEqual([403, 403, 403]);
    expect(await jobTotal()).toBe(before);
    expect((await fetch(`${serve.url}/api/workflow/rebound/definition`)).status).toBe(404);
    await page.close();
  });
  it('shows queued jobs: the limit, the queue in order on the workflow page, a queued job and its place, the Queued filter', async () => {
    // Prepare: a workflow of one running job at a time whose queue no worker reads, and 3 jobs.
    const name = `${WORKFLOW}-limited`;
    const definition = `workflows:\n  - name: ${name}\n    maxRunning: 1\n    steps:\n      - name: work\n        queue: ${queues.limited}\n`;
    expect(
      (await fetch(`${serve.url}/api/workflow/${name}`, { method: 'PUT', body: definition })).status,
    ).toBe(201);
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const response = await fetch(`${serve.url}/api/workflow/${name}`, { method: 'POST', body: '{}' });
      ids.push(((await response.json()) as { id: string }).id);
    }
    const { page, errors } = await openPage();

    // Act and assess: the workflow page.
    await page.goto(`${serve.url}/#/workflow/${name}`);
    const view = page.locator(`.workflow-view[data-workflow="${name}"]`);
    await view.locator('.queued-jobs tbody tr').nth(1).waitFor({ timeout: STATE_TIMEOUT });
    expect(await view.locator('[data-max-running="1"]').count()).toBe(1);
    await expect
      .poll(() => view.locator('[data-count="queued"]').textContent(), { timeout: STATE_TIMEOUT })
      .toBe('2 queued');
    expect(
      await view
        .locator('.queued-jobs tbody tr')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-job'))),
    ).toEqual(ids.slice(1));
    expect(await view.locator('.queued-jobs [data-status="queued"]').count()).toBe(2);
    await screenshot(page, 'workflow-queued');

    // A job the form starts joins the queue, and the panel shows it at once: sooner than its own
    // refresh, which it once waited for. The start follows one of those refreshes, so the next is
    // 5 s away whatever the machine's load: a row that shows within 4.5 s was read for the start.
    const form = view.locator('form.start-job');
    await form.locator('textarea[name="input"]').fill('{}');
    await page.waitForResponse((response) => /\/api\/jobs\?.*status=queued/.test(response.url()), {
      timeout: STATE_TIMEOUT,
    });
    const nextRefresh = Date.now() + 4_500;
    // Playwright reads a timeout of 0 as none.
    const beforeRefresh = () => ({ timeout: Math.max(1, nextRefresh - Date.now()) });
    await form.getByRole('button', { name: 'Start job' }).click();
    const started = form.locator('.started-job a');
    await started.waitFor(beforeRefresh());
    const fourth = String(await started.getAttribute('data-started-job'));
    ids.push(fourth);
    await view.locator(`.queued-jobs tr[data-job="${fourth}"]`).waitFor(beforeRefresh());

    // A queued job's page: its status and its place.
    await view.locator(`.queued-jobs tr[data-job="${ids[2]}"] a.mono`).click();
    await page.locator(`.job-view[data-job="${ids[2]}"]`).waitFor({ timeout: STATE_TIMEOUT });
    await expectJobStatus(page, 'queued');
    expect(await page.locator('[data-queue-position]').getAttribute('data-queue-position')).toBe('2');

    // The jobs list filters on Queued.
    await page.goto(`${serve.url}/#/jobs?workflow=${name}&status=queued`);
    await page.locator(`.jobs-table tr[data-job="${ids[1]}"]`).waitFor({ timeout: STATE_TIMEOUT });
    expect(await page.locator('.jobs-table tbody tr').count()).toBe(3);
    expect(errors).toEqual([]);
    for (const id of ids) await fetch(`${serve.url}/api/job/${id}`, { method: 'DELETE' });
    await page.close();
  }, 60_000);
});
