import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ServeHandle, type ServeOptions, startServe } from '../../functions/local/serve.js';
import { silentLogger } from '../../functions/telemetry/telemetry.js';
import { AMQP_URL, uniqueName } from './rabbitmq.js';

export interface TestServe {
  handle: ServeHandle;
  url: string;
  dir: string;
  dbPath: string;
  replyQueue: string;
  /** Calls the API; returns status and parsed JSON (or text). */
  api<T = unknown>(
    method: string,
    path: string,
    body?: string,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: T; headers: Headers }>;
  stop(): Promise<void>;
}

/**
 * `switchyard serve` in this process on the real RabbitMQ and a real SQLite file, with its own reply
 * queue so that test files running at the same time never take each other's replies.
 */
export async function startTestServe(
  workflowsYaml: string,
  options: Partial<ServeOptions> = {},
): Promise<TestServe> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-test-'));
  const config = join(dir, 'workflows.yaml');
  await writeFile(config, workflowsYaml);
  const dbPath = join(dir, 'switchyard.db');
  const replyQueue = options.replyQueue ?? uniqueName('replies');
  const handle = await startServe({
    configFiles: [config],
    db: dbPath,
    amqpUrl: AMQP_URL,
    port: 0,
    replyQueue,
    logger: silentLogger,
    ...options,
  });
  const api: TestServe['api'] = async (method, path, body, headers = {}) => {
    const response = await fetch(`${handle.url}${path}`, { method, body, headers });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed as never, headers: response.headers };
  };
  return {
    handle,
    url: handle.url,
    dir,
    dbPath,
    replyQueue,
    api,
    stop: async () => {
      await handle.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
