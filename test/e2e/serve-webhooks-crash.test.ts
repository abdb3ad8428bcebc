import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteQueues, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { documentedVerifier, startReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// `switchyard serve` as a process, killed (SIGKILL) with a delivery recorded and not yet delivered:
// after the restart the delivery is posted again, the same delivery (at least once).

const SECRET = 'whsec_0b4e-crash-never-stores-this';

describe('serve: a webhook delivery survives SIGKILL', { timeout: 120_000 }, () => {
  let dir: string;
  let hooks: WebhookReceiver;
  let serve: ServeProcess | undefined;
  const replyQueue = uniqueName('hook-replies');

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-hook-crash-'));
    hooks = await startReceiver('hang');
    await writeFile(join(dir, 'secrets.json'), JSON.stringify({ HOOK_KEY: SECRET }));
    await writeFile(
      join(dir, 'workflows.yaml'),
      `workflows:
  - name: approval
    notify:
      url: ${hooks.url}
      events: [step.waiting]
      secret: HOOK_KEY
    steps:
      - name: approve
        type: signal
`,
    );
  });

  afterAll(async () => {
    await serve?.kill('SIGKILL');
    await hooks?.close();
    await deleteQueues([replyQueue]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  const start = () =>
    spawnServe([
      '--config',
      join(dir, 'workflows.yaml'),
      '--db',
      join(dir, 'switchyard.db'),
      '--reply-queue',
      replyQueue,
      '--secrets-file',
      join(dir, 'secrets.json'),
    ]);

  it('posts, after the restart, the delivery serve was posting when it was killed', async () => {
    serve = await start();
    const started = await fetch(`${serve.url}/api/workflow/approval`, { method: 'POST', body: '{}' });
    const { id } = (await started.json()) as { id: string };
    // The receiver holds the post unanswered: the delivery is recorded, taken, not delivered.
    const [first] = await hooks.received(1);
    expect(await serve.kill('SIGKILL')).toBe(-1);

    hooks.mode = { status: 204 };
    serve = await start();
    const posts = await hooks.received(2);
    expect(posts[1]?.headers['switchyard-delivery']).toBe(first?.headers['switchyard-delivery']);
    expect(JSON.parse(posts[1]?.body ?? '')).toMatchObject({ type: 'step.waiting', jobId: id });
    const verify = await documentedVerifier();
    expect(verify(posts[1]?.headers['switchyard-signature'], posts[1]?.body ?? '', SECRET)).toBe(true);
    await expect
      .poll(async () => {
        const response = await fetch(`${serve?.url}/api/job/${id}/deliveries`);
        const { deliveries } = (await response.json()) as {
          deliveries: { state: string; attempts: number }[];
        };
        return deliveries.map((d) => [d.state, d.attempts]);
      })
      .toEqual([['delivered', 1]]);
  });
});
