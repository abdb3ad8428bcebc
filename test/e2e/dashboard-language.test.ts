import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { type ServeHandle, startServe } from '../../functions/local/serve.js';
import { createJsonLogger } from '../../functions/telemetry/json-logger.js';
import { buildDashboardAssets } from '../../scripts/build-dashboard.js';
import { eventually, uniqueName } from '../support/rabbitmq.js';
import { measureContrasts, unreadable } from '../support/readability.js';

/**
 * Issue 30's language on the job page, in chromium against serve (its in-process bus: every step here
 * is a signal step, a `workflow:` step or a `sleep:`, so no worker is needed): who signalled a step,
 * a loop's iterations, a sleeping step's wake time, the kept signals, the job's `waiting` badge in the
 * colour of a step that waits for someone, and a Rerun from a chosen step with a new input. Each page
 * is photographed at 1440 and 390 px into test-artifacts/dashboard/language/, and at 390 px nothing
 * is wider than the window (the History table scrolls within its card).
 */
const CHROMIUM = '/usr/bin/chromium';
const TIMEOUT = 15_000;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const ARTIFACTS = join(ROOT, 'test-artifacts/dashboard/language');
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

const WORKFLOWS = `workflows:
  - name: review-loop
    steps:
      - name: ask
        type: signal
      - name: poll
        workflow: one-answer
        depends: [ ask ]
        repeat: { until: 'output.done == true', max: 5 }
      - name: nap
        sleep: 1h
        depends: [ poll ]
      - name: confirm
        type: signal
        depends: [ nap ]
  - name: one-answer
    steps:
      - name: answer
        type: signal
`;

let work: string;
let serve: ServeHandle;
let browser: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`chromium is not installed at ${CHROMIUM}: apt-get install -y chromium`);
  await mkdir(ARTIFACTS, { recursive: true });
  work = await mkdtemp(join(tmpdir(), 'switchyard-dashboard-language-'));
  await writeFile(join(work, 'workflows.yaml'), WORKFLOWS);
  serve = await startServe({
    configFiles: [join(work, 'workflows.yaml')],
    db: join(work, 'switchyard.db'),
    bus: 'memory',
    replyQueue: uniqueName('dashboard-language'),
    port: 0,
    dashboard: await buildDashboardAssets(),
    logger: createJsonLogger({ level: 'error' }),
  });
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
  await browser?.close();
  await serve?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

async function api<T>(method: string, path: string, body?: string): Promise<{ status: number; body: T }> {
  const response = await fetch(`${serve.url}${path}`, { method, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
}

const read = async (id: string) => (await api<JobDocument>('GET', `/api/job/${id}`)).body;

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return { page, errors };
}

/** The page at both widths, photographed; at 390 px nothing wider than the window, and every text readable. */
async function photograph(page: Page, name: string): Promise<void> {
  for (const size of [WIDE, PHONE]) {
    await page.setViewportSize(size);
    await page.mouse.move(0, 0);
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${size.width}.png`), fullPage: true });
    expect(unreadable(await measureContrasts(page)), `${name} at ${size.width} px`).toEqual([]);
    if (size === PHONE)
      expect(
        await page.evaluate('document.documentElement.scrollWidth'),
        `${name}: page width`,
      ).toBeLessThanOrEqual(PHONE.width);
  }
  await page.setViewportSize(WIDE);
}

describe("The dashboard shows the language's edges (chromium, serve)", () => {
  let id: string;

  beforeAll(async () => {
    id = (await api<{ id: string }>('POST', '/api/workflow/review-loop', '{"doc": 7}')).body.id;
    // A signal for a step that does not wait yet: kept, and shown as such.
    expect((await api('POST', `/api/job/${id}/signal/confirm`, '{"ok": true}')).status).toBe(202);
    expect((await api('POST', `/api/job/${id}/signal/ask`, '{"question": "ready?"}')).status).toBe(200);
    // The loop's first iteration: its called job answers "not done".
    await eventually('the first iteration', async () => (await read(id)).steps.poll?.job, TIMEOUT);
    expect((await api('POST', `/api/job/${id}/signal/poll/answer`, '{"done": false}')).status).toBe(200);
    await eventually('the second iteration', async () => (await read(id)).steps.poll?.attempt === 2, TIMEOUT);
  }, 60_000);

  it("shows who signalled a step, a loop's iteration, the kept signal, and the job waiting in a waiting colour", async () => {
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${id}?step=poll`);
    const poll = page.locator('[data-step-panel="poll"]');
    await poll.locator('.step-iterations').waitFor({ timeout: TIMEOUT });
    expect(await poll.locator('.step-iterations').getAttribute('data-iterations')).toBe('1');
    expect(await poll.locator('.step-iterations').textContent()).toBe(
      'iteration 2 of at most 5 until output.done == true',
    );
    // The iteration that did not end the loop is in the attempts, with its output.
    expect(await poll.locator('tr[data-outcome="repeated"]').count()).toBe(1);
    expect(await page.locator('[data-kept-signal="confirm"]').textContent()).toContain('{"ok":true}');
    await photograph(page, 'job-looping');
    // The iteration's called job waits for someone (its signal step): its badge is not the grey of a
    // step not started, but the colour of a step that waits for someone.
    await page.goto(`${serve.url}/#/job/${(await read(id)).steps.poll?.job}`);
    const badge = page.locator('.job-header .badge[data-status="waiting"]');
    await badge.waitFor({ timeout: TIMEOUT });
    expect(await badge.getAttribute('class')).toContain('state-suspended');
    const background = (selector: string) =>
      page
        .locator(selector)
        .first()
        .evaluate(
          (element) =>
            (
              globalThis as unknown as { getComputedStyle(element: object): { backgroundColor: string } }
            ).getComputedStyle(element).backgroundColor,
        );
    expect(await background('.job-header .badge')).toBe(
      await background('.legend .state-suspended .legend-swatch'),
    );
    expect(await background('.job-header .badge')).not.toBe(
      await background('.legend .state-waiting .legend-swatch'),
    );

    await page.goto(`${serve.url}/#/job/${id}?step=ask`);
    const ask = page.locator('[data-step-panel="ask"] .step-signalled-by');
    await ask.waitFor({ timeout: TIMEOUT });
    expect(await ask.getAttribute('data-signalled-by')).toBe('root');
    expect(await ask.textContent()).toMatch(/^root /);
    await photograph(page, 'step-signalled-by');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows a sleeping step's wake time, then reruns the cancelled job from a chosen step with a new input", async () => {
    expect((await api('POST', `/api/job/${id}/signal/poll/answer`, '{"done": true}')).status).toBe(200);
    await eventually('the nap', async () => (await read(id)).steps.nap?.sleepingUntil, TIMEOUT);
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${id}?step=nap`);
    const nap = page.locator('[data-step-panel="nap"]');
    await nap.getByText('Sleeping until').waitFor({ timeout: TIMEOUT });
    expect(await page.locator('.graph-card [data-step="nap"] .node-note').textContent()).toMatch(
      /^sleeping until /,
    );
    expect(await page.locator('[data-step-panel="nap"] .step-iterations').count()).toBe(0);
    await page.goto(`${serve.url}/#/job/${id}?step=poll`);
    expect(await page.locator('[data-step-panel="poll"] .step-iterations').textContent()).toBe(
      '2 of at most 5, the last met the condition until output.done == true',
    );
    await photograph(page, 'job-sleeping');

    // A running job has no Rerun; once it ended, it has.
    expect(await page.getByRole('button', { name: 'Rerun…' }).count()).toBe(0);
    expect((await api('DELETE', `/api/job/${id}`)).status).toBe(200);
    await page.getByRole('button', { name: 'Rerun…' }).click();
    const form = page.locator('form.rerun-form');
    await form.waitFor({ timeout: TIMEOUT });
    // The step the page shows is the one it starts from, unless another is chosen.
    expect(await form.getByLabel('From step').inputValue()).toBe('poll');
    await form.getByLabel('From step').selectOption('ask');
    await form.getByLabel('New input (JSON, optional)').fill('[1]');
    await form.getByRole('button', { name: 'Rerun from ask' }).click();
    expect(await form.locator('.text-failed').textContent()).toBe(
      'The new input must be a JSON object, such as {"amount": 10}.',
    );
    await form.getByLabel('New input (JSON, optional)').fill('{"question": "again?"}');
    expect(await form.locator('.text-failed').count()).toBe(0);
    await photograph(page, 'job-rerun-form');
    await form.getByRole('button', { name: 'Rerun from ask' }).click();
    await form.waitFor({ state: 'detached', timeout: TIMEOUT });
    const job = await eventually(
      'the job to run again',
      async () => {
        const document = await read(id);
        return document.steps.poll?.status === 'running' && document;
      },
      TIMEOUT,
    );
    // The signal step took the new input as its new signal; the old attempts stay in the history.
    expect(job.steps.ask).toMatchObject({ status: 'completed' });
    const events = (await api<{ events: { kind: string; step?: string }[] }>('GET', `/api/job/${id}/events`))
      .body.events;
    expect(events.filter((entry) => entry.kind === 'job.rerun')).toEqual([
      expect.objectContaining({ step: 'ask' }),
    ]);
    await page.locator('.job-header .badge[data-status="running"]').waitFor({ timeout: TIMEOUT });
    await page.locator('.history-table tr[data-kind="job.rerun"]').waitFor({ timeout: TIMEOUT });
    await photograph(page, 'job-rerun');
    expect(errors).toEqual([]);
    await page.close();
  });
});
