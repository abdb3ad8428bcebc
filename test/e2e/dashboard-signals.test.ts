import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { type ServeHandle, startServe } from '../../functions/local/serve.js';
import { createJsonLogger } from '../../functions/telemetry/json-logger.js';
import { buildDashboardAssets } from '../../scripts/build-dashboard.js';
import { eventually, uniqueName } from '../support/rabbitmq.js';

/**
 * The dashboard and signals, in chromium against serve (its in-process bus: signal steps need no
 * worker): a signal kept until its step waits shows as a line on the job's page, and a signal step
 * with a `signal.schema` gets a form drawn from it instead of the JSON text area.
 */
const CHROMIUM = '/usr/bin/chromium';
const TIMEOUT = 15_000;

const WORKFLOWS = `workflows:
  - name: gated
    steps:
      - name: gate
        type: signal
      - name: approve
        type: signal
        depends: [gate]
        signal:
          schema:
            type: object
            required: [decision]
            properties:
              decision: { enum: [approve, reject], title: Decision }
              comment: { type: string, title: Comment }
`;

let work: string;
let serve: ServeHandle;
let browser: BrowserContext;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`chromium is not installed at ${CHROMIUM}: apt-get install -y chromium`);
  work = await mkdtemp(join(tmpdir(), 'switchyard-dashboard-signals-'));
  await writeFile(join(work, 'workflows.yaml'), WORKFLOWS);
  serve = await startServe({
    configFiles: [join(work, 'workflows.yaml')],
    db: join(work, 'switchyard.db'),
    bus: 'memory',
    replyQueue: uniqueName('dashboard-signals'),
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
    viewport: { width: 1440, height: 900 },
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

async function openPage(): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

describe('The dashboard and signals (chromium, serve)', () => {
  it('shows a line per signal the job keeps until its step waits', async () => {
    const { body } = await api<{ id: string }>('POST', '/api/workflow/gated', '{}');
    const kept = await api('POST', `/api/job/${body.id}/signal/approve`, '{"decision":"approve"}');
    expect(kept.status).toBe(202);
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${body.id}`);
    const line = page.locator('[data-kept-signal="approve"]');
    await line.waitFor({ timeout: TIMEOUT });
    expect(await line.textContent()).toContain('{"decision":"approve"}');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("draws the signal form from the step's schema: labels, a choice, the required mark; the signal it sends completes the step", async () => {
    const { body } = await api<{ id: string }>('POST', '/api/workflow/gated', '{"doc": 7}');
    expect((await api('POST', `/api/job/${body.id}/signal/gate`, '{}')).status).toBe(200);
    const { page, errors } = await openPage();
    await page.goto(`${serve.url}/#/job/${body.id}?step=approve`);
    const form = page.locator('[data-step-panel="approve"] .signal-form');
    await form.waitFor({ timeout: TIMEOUT });
    expect(await form.locator('textarea').count()).toBe(0);
    const decision = form.locator('[data-signal-field="decision"]');
    expect(await decision.locator('label').textContent()).toBe('Decision *');
    expect(await decision.locator('option').allTextContents()).toEqual(['Choose…', 'approve', 'reject']);
    await form.getByLabel('Decision').selectOption({ label: 'reject' });
    await form.getByLabel('Comment').fill('not this time');
    await form.getByRole('button', { name: 'Send signal' }).click();
    await eventually(
      'the job to complete',
      async () => (await api<JobDocument>('GET', `/api/job/${body.id}`)).body.status === 'completed',
      TIMEOUT,
    );
    const done = await api<JobDocument>('GET', `/api/job/${body.id}`);
    expect(done.body.result).toEqual({ doc: 7, decision: 'reject', comment: 'not this time' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
