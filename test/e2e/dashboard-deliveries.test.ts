import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delivery } from '../../engine/index.js';
import { type ServeHandle, startServe } from '../../functions/local/serve.js';
import { createJsonLogger } from '../../functions/telemetry/json-logger.js';
import { buildDashboardAssets } from '../../scripts/build-dashboard.js';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// The job page's Deliveries section in a real browser (Debian's chromium, playwright-core), against
// serve with a real HTTP receiver: how each delivery went, and a dead one redelivered by a click.

const CHROMIUM = '/usr/bin/chromium';

describe('dashboard: a job’s webhook deliveries', { timeout: 90_000 }, () => {
  let work: string;
  let hooks: WebhookReceiver;
  let serve: ServeHandle;
  let browser: BrowserContext;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`chromium is not installed at ${CHROMIUM}: apt-get install -y chromium`);
    work = await mkdtemp(join(tmpdir(), 'switchyard-dash-hooks-'));
    hooks = await startReceiver({ status: 500 });
    await writeFile(join(work, 'secrets.json'), JSON.stringify({ HOOK_KEY: 'whsec_dashboard' }));
    await writeFile(
      join(work, 'workflows.yaml'),
      `workflows:
  - name: approval
    notify:
      url: ${hooks.url}
      events: [job.completed]
      secret: HOOK_KEY
    steps:
      - name: approve
        type: signal
`,
    );
    serve = await startServe({
      configFiles: [join(work, 'workflows.yaml')],
      db: join(work, 'switchyard.db'),
      bus: 'memory',
      port: 0,
      secretsFile: join(work, 'secrets.json'),
      dashboard: await buildDashboardAssets(),
      logger: createJsonLogger({ level: 'error' }),
    });
    browser = await chromium.launchPersistentContext(join(work, 'chromium-profile'), {
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
      headless: true,
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await serve?.close();
    await hooks?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('shows each delivery’s state and last answer, and redelivers a dead one', async () => {
    const started = await fetch(`${serve.url}/api/workflow/approval`, { method: 'POST', body: '{}' });
    const { id } = (await started.json()) as { id: string };
    await fetch(`${serve.url}/api/job/${id}/signal/approve`, { method: 'POST', body: '{}' });
    await hooks.received(1);
    await expect.poll(async () => (await serve.store.jobDeliveries(id))[0]?.attempts).toBe(1);
    const [stored] = (await serve.store.jobDeliveries(id)) as [Delivery];
    const deliveryId = stored.id;
    // Its last attempt failed for good: dead (the attempts are made long apart; here the log moves on).
    await serve.store.updateDelivery({ ...stored, state: 'dead', attempts: 8, rev: stored.rev + 1 });

    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${serve.url}/#/job/${id}`);
    const section = page.getByRole('region', { name: 'Deliveries' });
    const row = section.locator(`tr[data-delivery="${deliveryId}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('dead');
    expect(await row.textContent()).toContain('job.completed');
    expect(await row.textContent()).toContain('HTTP 500');
    expect(await row.locator('.delivery-url').textContent()).toBe(hooks.url);

    hooks.mode = { status: 204 };
    await row.getByRole('button', { name: 'Redeliver' }).click();
    await hooks.received(2);
    await expect.poll(() => row.getAttribute('data-state'), { timeout: 15_000 }).toBe('delivered');
    expect(await row.locator('.delivery-state').textContent()).toBe('delivered');
    expect(errors).toEqual([]);
    await page.close();
  });
});
