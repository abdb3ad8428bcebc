import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { calledJobId } from '../../engine/job/calls.js';
import { onFailureJobId } from '../../engine/job/on-failure.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import { eventually } from './original-worker.js';
import { deleteQueues, uniqueName } from './rabbitmq.js';
import { abortReply, errorReply, reply, type Script, startScriptedWorkers } from './scripted-workers.js';
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
  /** Jobs whose middle step calls another workflow (`workflow:`) and goes on with its result. @default 0 */
  calls?: number;
  /**
   * Errors a workflow handles itself, `handled` jobs of each kind: jobs of a workflow with
   * `onFailure:` whose first step fails for good (half with a not-retryable error reply, half with
   * an `abort` reply), and jobs whose `continueOnError` step fails not retryable or succeeds (half
   * each) before two `when:` branches join. @default 0
   */
  handled?: number;
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
  /** Jobs started by `workflow:` steps (one per caller), and called jobs found twice for one attempt. */
  calledJobs: number;
  duplicateCalls: number;
  /** Jobs that failed or were aborted, the `onFailure` jobs found, and failing jobs without exactly one. */
  failingJobs: number;
  onFailureJobs: number;
  missingOrExtraOnFailure: number;
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
  'prep',
  'call',
  'c1',
  'c2',
  'finish',
  'doom',
  'note',
  'risky',
  'join',
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
  - name: caller
    steps:
      - { name: prep, queue: ${q('prep')} }
      - { name: call, workflow: callee, depends: [ prep ] }
      - { name: finish, queue: ${q('finish')}, depends: [ call ] }
  - name: callee
    steps:
      - { name: c1, queue: ${q('c1')} }
      - { name: c2, queue: ${q('c2')}, depends: [ c1 ] }
  - name: doomed
    onFailure: failure-handler
    steps:
      - { name: doom, queue: ${q('doom')}, retries: 2 }
      - { name: never, queue: ${q('never')}, depends: [ doom ] }
  - name: failure-handler
    steps:
      - { name: note, queue: ${q('note')} }
  - name: branchy
    steps:
      - { name: risky, queue: ${q('risky')}, retries: 2, continueOnError: true }
      - { name: recover, queue: ${q('recover')}, depends: [ risky ], when: 'has(input.error)' }
      - { name: normal, queue: ${q('normal')}, depends: [ risky ], when: '!has(input.error)' }
      - { name: join, queue: ${q('join')}, depends: [ recover, normal ] }
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
    // caller -> callee: the call step's output is the callee's result.
    [q('prep')]: ({ input }) => [reply({ ...input, prepped: num(input.n) + 1 })],
    [q('c1')]: ({ input }) => [reply({ ...input, c1: num(input.prepped) * 3 })],
    [q('c2')]: ({ input }) => [reply({ n: input.n, c2: num(input.c1) + 1 })],
    [q('finish')]: ({ input }) => [reply({ ...input, finished: true })],
    // doomed: fails for good on its first attempt, whatever `retries` says; `never` never runs.
    [q('doom')]: ({ input }) =>
      num(input.n) % 2 === 0
        ? [errorReply(`doomed ${num(input.n)}`, { retryable: false })]
        : [abortReply(`doomed ${num(input.n)}`)],
    [q('never')]: ({ input }) => [reply(input)],
    [q('note')]: ({ input }) => [reply({ noted: (input.job as { id: string }).id })],
    // branchy: even jobs' risky step fails for good and recover runs; odd jobs' succeeds and normal runs.
    [q('risky')]: ({ input }) =>
      num(input.n) % 2 === 0
        ? [errorReply(`risky ${num(input.n)}`, { retryable: false })]
        : [reply({ ...input, risky: 'ok' })],
    [q('recover')]: ({ input }) => [reply({ recovered: (input.error as { message: string }).message })],
    [q('normal')]: ({ input }) => [reply({ ...input, normal: true })],
    [q('join')]: ({ input }) => [reply({ ...input, joined: true })],
  };
}

interface PlannedJob {
  id: string;
  workflow: string;
  input: Record<string, unknown>;
  /** The result; undefined for a job that must fail (then `status` says how). */
  expected: Record<string, unknown> | undefined;
  status: 'completed' | 'failed' | 'aborted';
}

function plan(options: CrashWorkloadOptions): PlannedJob[] {
  const jobs: PlannedJob[] = [];
  const add = (
    workflow: string,
    input: Record<string, unknown>,
    expected: Record<string, unknown> | undefined,
    status: PlannedJob['status'] = 'completed',
  ) => jobs.push({ id: crypto.randomUUID(), workflow, input, expected, status });
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
  for (let n = 0; n < (options.calls ?? 0); n++)
    add('caller', { n }, { n, c2: (n + 1) * 3 + 1, finished: true });
  for (let n = 0; n < (options.handled ?? 0); n++) {
    add('doomed', { n }, undefined, n % 2 === 0 ? 'failed' : 'aborted');
    add(
      'branchy',
      { n },
      n % 2 === 0
        ? { recovered: `risky ${n}`, joined: true }
        : { n, risky: 'ok', normal: true, joined: true },
    );
  }
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
      if (document.status !== job.status) lost++;
      else if (JSON.stringify(document.result) !== JSON.stringify(job.expected)) wrongResults++;
      expect({ workflow: job.workflow, status: document.status, result: document.result }, job.id).toEqual({
        workflow: job.workflow,
        status: job.status,
        result: job.expected,
      });
    }
    const linked = await checkLinkedJobs(current.url, jobs, documents);

    // The workers' view: which attempts of each request reached a worker.
    let unexpectedAttempts = 0;
    const attempts = workers.attemptsByRequest();
    for (const [correlationId, seen] of attempts) {
      const step = correlationId.slice(correlationId.indexOf(':') + 1);
      const expected =
        step === 'never'
          ? false
          : step === 'wobble'
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
      ...linked,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await serve?.kill('SIGTERM');
    await workers.stop();
    await deleteQueues([...Object.keys(scripts(q)), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every top-level job of a workflow, whatever its status, through the API (all pages). */
async function jobIdsOf(url: string, workflow: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = (await (
      await fetch(
        `${url}/api/jobs?workflow=${workflow}&status=all&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
    ).json()) as { jobs: string[]; cursor?: string };
    ids.push(...page.jobs);
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

/**
 * The jobs the workload's jobs started: one called job per caller (its derived id, linked back,
 * never two for one attempt), and one `onFailure` job per failing job (linked both ways, as many
 * jobs of the handler workflow as failing jobs).
 */
async function checkLinkedJobs(
  url: string,
  jobs: readonly PlannedJob[],
  documents: readonly JobDocument[],
): Promise<
  Pick<
    CrashFigures,
    'calledJobs' | 'duplicateCalls' | 'failingJobs' | 'onFailureJobs' | 'missingOrExtraOnFailure'
  >
> {
  const get = async (id: string) => (await (await fetch(`${url}/api/job/${id}`)).json()) as JobDocument;
  const callers = documents.filter((document) => document.workflow === 'caller');
  const called = await jobIdsOf(url, 'callee');
  const calls = new Map<string, number>();
  for (const id of called) {
    const document = await get(id);
    expect(document.status, `called job ${id}`).toBe('completed');
    const link = document.calledBy;
    expect(link, `called job ${id} names its caller`).toBeDefined();
    if (!link) continue;
    expect(id).toBe(calledJobId(link.id, link.step, link.attempt));
    const key = `${link.id}/${link.step}/${link.attempt}`;
    calls.set(key, (calls.get(key) ?? 0) + 1);
  }
  for (const caller of callers) {
    expect(caller.steps.call, caller.uuid).toMatchObject({
      status: 'completed',
      attempt: 1,
      job: calledJobId(caller.uuid, 'call', 1),
    });
    expect(calls.get(`${caller.uuid}/call/1`), `called jobs of ${caller.uuid}`).toBe(1);
  }
  expect(called).toHaveLength(callers.length);
  const duplicateCalls = [...calls.values()].reduce((sum, count) => sum + count - 1, 0);

  const failing = jobs.filter((job) => job.workflow === 'doomed');
  const handlers = await jobIdsOf(url, 'failure-handler');
  let missingOrExtraOnFailure = 0;
  const causes = new Map<string, number>();
  for (const id of handlers) {
    const document = await get(id);
    expect(document, `onFailure job ${id}`).toMatchObject({
      status: 'completed',
      result: { noted: document.causedBy },
    });
    causes.set(String(document.causedBy), (causes.get(String(document.causedBy)) ?? 0) + 1);
  }
  for (const job of failing) {
    const document = documents[jobs.indexOf(job)] as JobDocument;
    expect(document.followUp, `followUp of ${job.id}`).toBe(onFailureJobId(job.id, 1));
    expect(document.error?.step, job.id).toBe('doom');
    expect(document.steps.never?.status, job.id).toBe('waiting');
    if (causes.get(job.id) !== 1 || !handlers.includes(document.followUp as string))
      missingOrExtraOnFailure++;
    expect(causes.get(job.id), `onFailure jobs of ${job.id}`).toBe(1);
  }
  expect(handlers).toHaveLength(failing.length);
  for (const job of jobs.filter((j) => j.workflow === 'branchy')) {
    const document = documents[jobs.indexOf(job)] as JobDocument;
    const failed = Number(job.input.n) % 2 === 0;
    expect(document.steps.risky, job.id).toMatchObject({
      status: failed ? 'failed' : 'completed',
      attempt: 1,
    });
    expect(document.steps.risky?.handled, job.id).toBe(failed ? true : undefined);
    expect(document.steps[failed ? 'normal' : 'recover']?.status, job.id).toBe('skipped');
  }
  return {
    calledJobs: called.length,
    duplicateCalls,
    failingJobs: failing.length,
    onFailureJobs: handlers.length,
    missingOrExtraOnFailure,
  };
}
