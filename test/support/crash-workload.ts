import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { eventually } from './original-worker.js';
import { deleteQueues, uniqueName } from './rabbitmq.js';
import { errorReply, reply, type Script, startScriptedWorkers } from './scripted-workers.js';
import { type ServeProcess, spawnServe } from './serve-process.js';

export interface CrashWorkloadOptions {
  /** SIGKILLs of `switchyard serve`, each followed by a restart on the same database. */
  kills: number;
  diamonds: number;
  fanOuts: number;
  nestedFanOuts: number;
  /** Jobs whose first step fails twice with an error reply and succeeds on its third attempt. */
  retried: number;
  /** Jobs whose first step gets no reply to attempt 1 and times out once. */
  timedOut: number;
  /** The longest wait, after the last kill, for every job to end. @default 180_000 */
  settleMs?: number;
}

export interface CrashFigures {
  kills: number;
  jobs: number;
  /** Top-level jobs running when each kill landed (-1: serve did not answer). */
  runningAtKill: number[];
  /** Distinct requests (correlation id and attempt) the workers took. */
  requests: number;
  /** Deliveries of a request already seen: re-sent after a crash, or redelivered. */
  duplicateDeliveries: number;
  lost: number;
  wrongResults: number;
  /** Steps given a new attempt that no failure, error reply or timeout called for. */
  unexpectedAttempts: number;
  seconds: number;
}

/** Steps whose every request must be attempt 1 (no retries, no timeouts). */
const SINGLE_ATTEMPT_QUEUES = [
  's1',
  's2',
  's3',
  's4',
  'double',
  'total',
  'expand',
  'square',
  'group-total',
  'sum',
  'after',
];

function workflowsYaml(q: (name: string) => string): string {
  return `workflows:
  - name: diamond
    steps:
      - { name: s1, queue: ${q('s1')} }
      - { name: s2, queue: ${q('s2')}, depends: [ s1 ] }
      - { name: s3, queue: ${q('s3')}, depends: [ s1 ] }
      - { name: s4, queue: ${q('s4')}, depends: [ s2, s3 ] }
  - name: fan
    steps:
      - { name: each, task: per-item }
      - { name: total, queue: ${q('total')}, depends: [ each ] }
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - { name: double, queue: ${q('double')} }
  - name: nested
    steps:
      - { name: groups, task: per-group }
      - { name: sum, queue: ${q('sum')}, depends: [ groups ] }
    tasks:
      - name: per-group
        itemListKey: groups
        steps:
          - { name: expand, queue: ${q('expand')} }
          - { name: members, task: per-member, depends: [ expand ] }
          - { name: group-total, queue: ${q('group-total')}, depends: [ members ] }
      - name: per-member
        itemListKey: members
        steps:
          - { name: square, queue: ${q('square')} }
  - name: retried
    steps:
      - { name: wobble, queue: ${q('wobble')}, retries: 3 }
      - { name: after, queue: ${q('after')}, depends: [ wobble ] }
  - name: timed
    steps:
      - { name: dawdle, queue: ${q('dawdle')}, timeout: 2s, retries: 3 }
      - { name: after, queue: ${q('after')}, depends: [ dawdle ] }
`;
}

const num = (value: unknown): number => value as number;

function scripts(q: (name: string) => string): Record<string, Script> {
  return {
    [q('s1')]: ({ input }) => [reply({ ...input, s1: num(input.n) + 1 })],
    [q('s2')]: ({ input }) => [reply({ ...input, s2: num(input.s1) * 2 })],
    [q('s3')]: ({ input }) => [reply({ ...input, s3: num(input.s1) * 3 })],
    [q('s4')]: ({ input }) => [reply({ n: input.n, sum: num(input.s2) + num(input.s3) })],
    [q('double')]: ({ input }) => [reply({ item: num(input.item) * 2 })],
    [q('total')]: ({ input }) => [reply({ total: (input.items as number[]).reduce((a, b) => a + b, 0) })],
    [q('expand')]: ({ input }) => [reply({ members: [0, 1, 2].map((k) => num(input.group) + k) })],
    [q('square')]: ({ input }) => [reply({ member: num(input.member) ** 2 })],
    [q('group-total')]: ({ input }) => [
      reply({ group: (input.members as number[]).reduce((a, b) => a + b, 0) }),
    ],
    [q('sum')]: ({ input }) => [reply({ total: (input.groups as number[]).reduce((a, b) => a + b, 0) })],
    // Fails its first two attempts with an error reply.
    [q('wobble')]: ({ input, attempt }) =>
      attempt < 3 ? [errorReply(`wobbly on attempt ${attempt}`)] : [reply({ ...input, wobble: 'steady' })],
    // Never answers attempt 1: it times out.
    [q('dawdle')]: ({ input, attempt }) => (attempt === 1 ? [] : [reply({ ...input, dawdled: true })]),
    [q('after')]: ({ input }) => [reply({ ...input, after: true })],
  };
}

interface PlannedJob {
  id: string;
  workflow: string;
  input: Record<string, unknown>;
  expected: Record<string, unknown>;
}

function plan(options: CrashWorkloadOptions): PlannedJob[] {
  const jobs: PlannedJob[] = [];
  const add = (workflow: string, input: Record<string, unknown>, expected: Record<string, unknown>) =>
    jobs.push({ id: crypto.randomUUID(), workflow, input, expected });
  for (let n = 0; n < options.diamonds; n++) add('diamond', { n }, { n, sum: (n + 1) * 5 });
  for (let f = 0; f < options.fanOuts; f++) {
    const items = Array.from({ length: 10 + (f % 15) }, (_, i) => i + f);
    add('fan', { items }, { total: items.reduce((a, b) => a + b * 2, 0) });
  }
  for (let g = 0; g < options.nestedFanOuts; g++) {
    const groups = Array.from({ length: 3 + (g % 4) }, (_, i) => i * 10 + g);
    const total = groups.reduce((sum, group) => sum + [0, 1, 2].reduce((s, k) => s + (group + k) ** 2, 0), 0);
    add('nested', { groups }, { total });
  }
  for (let n = 0; n < options.retried; n++) add('retried', { n }, { n, wobble: 'steady', after: true });
  for (let n = 0; n < options.timedOut; n++) add('timed', { n }, { n, dawdled: true, after: true });
  // Interleave the kinds, so that every kind is in flight at every kill.
  return jobs.sort(() => Math.random() - 0.5);
}

/**
 * `switchyard serve` as a child process, killed with SIGKILL at random moments while a workload of
 * diamonds, fan-outs, nested fan-outs, retried and timed-out steps runs, and restarted on the same
 * database each time. Asserts that every job ends with the right result and that the manager never
 * started an attempt nothing called for; returns the figures for RELIABILITY.md.
 */
export async function runCrashWorkload(options: CrashWorkloadOptions): Promise<CrashFigures> {
  const started = Date.now();
  const suffix = uniqueName('crash');
  const q = (name: string) => `${name}-${suffix}`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-crash-'));
  await writeFile(join(dir, 'workflows.yaml'), workflowsYaml(q));
  const args = [
    '--config',
    join(dir, 'workflows.yaml'),
    '--db',
    join(dir, 'switchyard.db'),
    '--reply-queue',
    q('replies'),
    // Fan-outs of 10 to 24 items create their children in 3 to 6 slices, so kills land between them.
    '--fan-out-slice',
    '4',
  ];
  const workers = await startScriptedWorkers(scripts(q), {
    prefetch: 20,
    delayMs: 40,
    connectionName: `switchyard-test-crash-workers-${suffix}`,
  });
  let serve: ServeProcess | undefined;
  try {
    serve = await spawnServe(args);
    const jobs = plan(options);
    // Retried through outages with the same id: starting a job is idempotent.
    const submit = (job: PlannedJob) =>
      eventually(
        async () => {
          const response = await fetch(`${serve?.url}/api/workflow/${job.workflow}?id=${job.id}`, {
            method: 'POST',
            body: JSON.stringify(job.input),
          });
          return response.status === 201 || response.status === 200;
        },
        60_000,
        100,
      );
    // A share of the jobs goes in after each restart, so that every kill lands with work in flight.
    const chunk = Math.ceil(jobs.length / (options.kills + 1));
    const submissions: Promise<unknown>[] = [];
    const submitChunk = (index: number) => {
      const slice = jobs.slice(index * chunk, (index + 1) * chunk);
      submissions.push(Promise.all(slice.map(submit)));
    };
    const runningAtKill: number[] = [];
    for (let kill = 0; kill < options.kills; kill++) {
      submitChunk(kill);
      await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 350));
      const running = await fetch(`${serve.url}/api/jobs?limit=1000`)
        .then(async (response) => ((await response.json()) as { jobs: string[] }).jobs.length)
        .catch(() => -1);
      runningAtKill.push(running);
      await serve.kill('SIGKILL');
      serve = await spawnServe(args);
    }
    submitChunk(options.kills);
    await Promise.all(submissions);

    const current = serve;
    const documents = await eventually(
      async () => {
        const running = (await (await fetch(`${current.url}/api/jobs?limit=1000`)).json()) as {
          jobs: string[];
        };
        if (running.jobs.length > 0) return false;
        return Promise.all(
          jobs.map(
            async (job) => (await (await fetch(`${current.url}/api/job/${job.id}`)).json()) as JobDocument,
          ),
        );
      },
      options.settleMs ?? 180_000,
      500,
    ).catch((error) => {
      throw new Error(`not every job ended: ${(error as Error).message}\n${current.output().slice(-3000)}`);
    });

    let lost = 0;
    let wrongResults = 0;
    for (const [index, document] of documents.entries()) {
      const job = jobs[index] as PlannedJob;
      if (document.status !== 'completed') lost++;
      else if (JSON.stringify(document.result) !== JSON.stringify(job.expected)) wrongResults++;
      expect({ workflow: job.workflow, status: document.status, result: document.result }, job.id).toEqual({
        workflow: job.workflow,
        status: 'completed',
        result: job.expected,
      });
    }

    // The workers' view: which attempts of each request reached a worker.
    let unexpectedAttempts = 0;
    const attempts = workers.attemptsByRequest();
    for (const [correlationId, seen] of attempts) {
      const step = correlationId.slice(correlationId.indexOf(':') + 1);
      const expected =
        step === 'wobble'
          ? JSON.stringify(seen) === '[1,2,3]'
          : step === 'dawdle'
            ? seen.length >= 2 && seen.length <= 4 && seen.every((attempt, i) => attempt === i + 1)
            : JSON.stringify(seen) === '[1]';
      if (!expected) unexpectedAttempts++;
      expect(expected, `attempts of ${correlationId}: ${JSON.stringify(seen)}`).toBe(true);
    }
    // The manager's view: a step's attempt count in the job document.
    for (const document of documents) {
      for (const [step, state] of Object.entries(document.steps)) {
        const counted = state.attempt;
        if (step === 'wobble') expect(counted, `${document.uuid} ${step}`).toBe(3);
        else if (step === 'dawdle') expect(counted, `${document.uuid} ${step}`).toBeGreaterThanOrEqual(2);
        else if (SINGLE_ATTEMPT_QUEUES.includes(step)) expect(counted, `${document.uuid} ${step}`).toBe(1);
      }
    }
    return {
      kills: options.kills,
      jobs: jobs.length,
      runningAtKill,
      requests: new Set(workers.deliveries.map((d) => `${d.correlationId}#${d.attempt}`)).size,
      duplicateDeliveries: workers.duplicates(),
      lost,
      wrongResults,
      unexpectedAttempts,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await serve?.kill('SIGTERM');
    await workers.stop();
    await deleteQueues([...Object.keys(scripts(q)), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  }
}
