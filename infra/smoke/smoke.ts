/**
 * The smoke test of a deployed stack (`npm run smoke:aws -- --profile P`), as logic over two small
 * interfaces so that it runs here against the simulation (test/e2e/smoke-aws.test.ts) and, with
 * cdk-cloud.ts, against a real account: for each bus, deploy a throwaway stack, run the word count
 * through its API, check that a workflow schedule fires, read the alarms, and destroy the stack
 * whatever happened.
 */

import { FINISHED_JOB_STATUSES } from '../../engine/index.js';

export type SmokeBus = 'sqs' | 'rabbitmq';

export interface SmokeAnswer {
  status: number;
  body: unknown;
}

/** A deployed stack's API, as its callers reach it (API Gateway, with the stack's credentials). */
export interface SmokeStack {
  call(method: string, path: string, body?: string, headers?: Record<string, string>): Promise<SmokeAnswer>;
  /** Whether workers answer the word count's steps (Amazon MQ's are in a private VPC: not from here). */
  workers: boolean;
}

/** Where stacks are deployed, read and destroyed. */
export interface SmokeCloud {
  deploy(bus: SmokeBus): Promise<SmokeStack>;
  /** Every alarm of the stack with its state (`OK`, `ALARM`, `INSUFFICIENT_DATA`). */
  alarms(bus: SmokeBus): Promise<{ name: string; state: string }[]>;
  destroy(bus: SmokeBus): Promise<void>;
}

export interface SmokeOptions {
  buses: readonly SmokeBus[];
  log: (line: string) => void;
  /** @default 600000 */
  jobTimeoutMs?: number;
  /** A schedule ticks every minute: @default 180000 */
  scheduleTimeoutMs?: number;
  /** @default 2000 */
  pollMs?: number;
}

export interface SmokeCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface SmokeResult {
  bus: SmokeBus;
  ok: boolean;
  checks: SmokeCheck[];
}

/** The example's book, counted (examples/word-counts): what a working stack answers. */
export const WORD_COUNT_RESULT = { chapters: 12, tokens: 29_371, distinct: 5_947 } as const;

/** Runs every bus's smoke test, one after the other; each stack is destroyed before the next. */
export async function runSmoke(cloud: SmokeCloud, options: SmokeOptions): Promise<SmokeResult[]> {
  const results: SmokeResult[] = [];
  for (const bus of options.buses) results.push(await smokeOne(cloud, bus, options));
  return results;
}

async function smokeOne(cloud: SmokeCloud, bus: SmokeBus, options: SmokeOptions): Promise<SmokeResult> {
  const checks: SmokeCheck[] = [];
  const check = async (name: string, run: () => Promise<string>): Promise<boolean> => {
    try {
      const detail = await run();
      checks.push({ name, ok: true, detail });
      options.log(`[${bus}] ok: ${name}: ${detail}`);
      return true;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      checks.push({ name, ok: false, detail });
      options.log(`[${bus}] FAILED: ${name}: ${detail}`);
      return false;
    }
  };
  let stack: SmokeStack | undefined;
  try {
    const deployed = await check('deploy', async () => {
      stack = await cloud.deploy(bus);
      return 'stack deployed';
    });
    if (deployed && stack) {
      const api = stack;
      await check('word count through the API', () => wordCount(api, options));
      await check('a schedule fires', () => scheduleFires(api, options));
      await check('alarms', async () => {
        const alarms = await cloud.alarms(bus);
        const firing = alarms.filter((alarm) => alarm.state === 'ALARM').map((alarm) => alarm.name);
        if (firing.length) throw new Error(`in ALARM: ${firing.join(', ')}`);
        return `${alarms.length} alarms, none in ALARM`;
      });
    }
  } finally {
    await check('destroy', async () => {
      await cloud.destroy(bus);
      return 'stack destroyed';
    });
  }
  return { bus, ok: checks.every((entry) => entry.ok), checks };
}

async function wordCount(api: SmokeStack, options: SmokeOptions): Promise<string> {
  const started = await api.call('POST', '/api/workflow/book-word-counts', '{}', {
    'content-type': 'application/json',
  });
  if (started.status !== 201)
    throw new Error(`start answered ${started.status}: ${JSON.stringify(started.body)}`);
  const id = (started.body as { id: string }).id;
  if (!api.workers) {
    const job = await until(options, options.jobTimeoutMs ?? 600_000, async () => {
      const read = await api.call('GET', `/api/job/${id}`);
      const document = read.body as { steps?: Record<string, { status: string }> };
      return read.status === 200 && document.steps?.['book-split']?.status === 'running'
        ? document
        : undefined;
    });
    return `job ${id} started and its first request sent (${Object.keys(job.steps ?? {}).length} steps; no workers reach this bus from here)`;
  }
  const job = await until(options, options.jobTimeoutMs ?? 600_000, async () => {
    const read = await api.call('GET', `/api/job/${id}`);
    const document = read.body as { status: string; result?: Record<string, unknown>; error?: unknown };
    return read.status === 200 && (FINISHED_JOB_STATUSES as readonly string[]).includes(document.status)
      ? document
      : undefined;
  });
  if (job.status !== 'completed') throw new Error(`job ${id} ${job.status}: ${JSON.stringify(job.error)}`);
  for (const [key, value] of Object.entries(WORD_COUNT_RESULT)) {
    if (job.result?.[key] !== value)
      throw new Error(`job ${id}: ${key} is ${job.result?.[key]}, not ${value}`);
  }
  return `job ${id} completed: ${WORD_COUNT_RESULT.tokens} words`;
}

async function scheduleFires(api: SmokeStack, options: SmokeOptions): Promise<string> {
  const name = `smoke-schedule-${Math.random().toString(36).slice(2, 8)}`;
  const definition = `name: ${name}\nschedules:\n  - cron: "* * * * *"\nsteps:\n  - name: ${name}-tick\n`;
  const registered = await api.call('PUT', `/api/workflow/${name}`, definition, {
    'content-type': 'application/yaml',
  });
  if (registered.status !== 201) {
    throw new Error(`registering ${name} answered ${registered.status}: ${JSON.stringify(registered.body)}`);
  }
  try {
    const jobs = await until(options, options.scheduleTimeoutMs ?? 180_000, async () => {
      const listed = await api.call('GET', `/api/jobs?workflow=${name}&status=all`);
      const ids = (listed.body as { jobs?: string[] }).jobs ?? [];
      return ids.length ? ids : undefined;
    });
    return `${name} started job ${jobs[0]} on its own`;
  } finally {
    await api.call('DELETE', `/api/workflow/${name}`);
  }
}

async function until<T>(
  options: SmokeOptions,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not within ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 2_000));
  }
}
