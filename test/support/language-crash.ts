import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { deleteQueues, uniqueName } from './rabbitmq.js';
import { reply, type Script, startScriptedWorkers } from './scripted-workers.js';
import { type ServeProcess, spawnServe } from './serve-process.js';

/*
 * Issue 30's soak: jobs that sleep (`sleep:`), loop (`repeat:`) and wait for someone (a signal step
 * answered before, while and after it waits; a worker step answered through its callback token; a
 * worker step whose worker suspends it, signalled before or after it did) run
 * while `switchyard serve` is killed with SIGKILL and restarted on the same SQLite file.
 *
 * "Lost": a job that does not end, or ends in another state or with another result than planned.
 * "Doubled" (a worker's reply is at-least-once, so a request delivered twice is not doubled): the
 * engine taking two answers for one attempt (two 2xx for one signal step, two 200s for one callback
 * token, a step whose document counts more attempts than its work called for) or running an
 * iteration twice (a loop's worker seeing an attempt past its last iteration, or its document
 * counting other iterations than the condition asked for).
 */

export interface LanguageCrashOptions {
  kills: number;
  /** Jobs of each of the five workflows. */
  jobsPerKind: number;
  /** The longest wait, after the last kill, for every job to end. @default 180_000 */
  settleMs?: number;
}

export interface LanguageCrashFigures {
  kills: number;
  jobs: number;
  /** Jobs not ended when each kill landed (-1: serve did not answer). */
  unfinishedAtKill: number[];
  /** Distinct requests (correlation id and attempt) the workers took, and deliveries of one already seen. */
  requests: number;
  duplicateDeliveries: number;
  /** Signals answered 202 (kept until the step waits), 200 (taken at once), 409 (sent after the step took one). */
  signalsKept: number;
  signalsTaken: number;
  signalsRefusedAfter: number;
  /** Callbacks answered 200 (taken) and 409 (the attempt had already ended: a re-sent request's second callback). */
  callbacksTaken: number;
  callbacksRefused: number;
  lost: number;
  doubled: number;
  seconds: number;
}

type Kind = 'sleeper' | 'looper' | 'approval' | 'hooked' | 'suspender';
type SignalMode = 'early' | 'during' | 'after';

interface PlannedJob {
  id: string;
  kind: Kind;
  n: number;
  mode?: SignalMode;
  expected: Record<string, unknown>;
}

/** Iterations of a loop: its condition holds on the third. */
const LOOP_ITERATIONS = 3;

function workflowsYaml(q: (name: string) => string): string {
  return `workflows:
  - name: sleeper
    steps:
      - { name: prep, queue: ${q('prep')} }
      - { name: nap, sleep: 1s, depends: [ prep ] }
      - { name: after, queue: ${q('after')}, depends: [ nap ] }
  - name: looper
    steps:
      - name: poll
        queue: ${q('poll')}
        repeat: { until: 'output.polls >= ${LOOP_ITERATIONS}', max: 5, delay: 300ms }
      - { name: after, queue: ${q('after')}, depends: [ poll ] }
  - name: approval
    steps:
      - { name: send, queue: ${q('send')} }
      - { name: approve, type: signal, depends: [ send ] }
      - { name: after, queue: ${q('after')}, depends: [ approve ] }
  - name: suspender
    steps:
      - { name: hold, queue: ${q('hold')} }
  - name: hooked
    steps:
      - { name: hook, queue: ${q('hook')}, timeout: 120s }
      - { name: after, queue: ${q('after')}, depends: [ hook ] }
`;
}

function plan(perKind: number): PlannedJob[] {
  const jobs: PlannedJob[] = [];
  const modes: SignalMode[] = ['early', 'during', 'after'];
  for (let n = 0; n < perKind; n++) {
    const id = () => crypto.randomUUID();
    jobs.push({ id: id(), kind: 'sleeper', n, expected: { n, prepped: n + 1, after: true } });
    jobs.push({ id: id(), kind: 'looper', n, expected: { n, polls: LOOP_ITERATIONS, after: true } });
    jobs.push({
      id: id(),
      kind: 'approval',
      n,
      mode: modes[n % modes.length] as SignalMode,
      expected: { n, sent: true, approved: n, after: true },
    });
    jobs.push({ id: id(), kind: 'hooked', n, expected: { n, hooked: true, after: true } });
    jobs.push({
      id: id(),
      kind: 'suspender',
      n,
      mode: n % 2 === 0 ? 'early' : 'during',
      expected: { n, signal: { go: n } },
    });
  }
  return jobs.sort(() => Math.random() - 0.5);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * POSTs until serve answers with one of `done` (a refused connection while serve is down is tried
 * again), at most `ms`; the statuses it answered, in order (a 409 after a lost answer is expected).
 */
async function postUntil(
  url: () => string,
  path: string,
  body: object,
  done: readonly number[],
  ms = 120_000,
): Promise<number[]> {
  const statuses: number[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url()}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
      if (done.includes(response.status)) return statuses;
    } catch {
      statuses.push(0);
    }
    await sleep(100);
  }
  throw new Error(`POST ${path} got no answer among ${done} within ${ms} ms: ${statuses}`);
}

/** The job's document once `ready` holds for it, read through restarts, at most `ms`. */
async function documentWhen(
  url: () => string,
  id: string,
  ready: (document: JobDocument) => boolean,
  ms = 120_000,
): Promise<JobDocument> {
  const deadline = Date.now() + ms;
  let last: JobDocument | undefined;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url()}/api/job/${id}`, { signal: AbortSignal.timeout(15_000) });
      if (response.ok) {
        last = (await response.json()) as JobDocument;
        if (ready(last)) return last;
      } else await response.arrayBuffer();
    } catch {
      // serve is down: try again
    }
    await sleep(150);
  }
  throw new Error(`job ${id} did not get there within ${ms} ms: ${JSON.stringify(last)}`);
}

const ended = (document: JobDocument) =>
  ['completed', 'failed', 'cancelled', 'aborted'].includes(document.status);

/**
 * Runs the workload through `options.kills` SIGKILLs of serve; asserts that every job ends as
 * planned and nothing is doubled, and returns the figures for RELIABILITY.md.
 */
export async function runLanguageCrashWorkload(options: LanguageCrashOptions): Promise<LanguageCrashFigures> {
  const started = Date.now();
  const suffix = uniqueName('lang-crash');
  const q = (name: string) => `${name}-${suffix}`;
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-lang-crash-'));
  await writeFile(join(dir, 'workflows.yaml'), workflowsYaml(q));
  const args = [
    '--config',
    join(dir, 'workflows.yaml'),
    '--db',
    join(dir, 'switchyard.db'),
    '--reply-queue',
    q('replies'),
  ];
  let serve: ServeProcess | undefined;
  const url = () => serve?.url as string;
  /** Callback answers per token, from the "other system" each hook request hands its token to. */
  const callbackAnswers = new Map<string, number[]>();
  const callbacks: Promise<unknown>[] = [];
  const num = (value: unknown) => value as number;
  const scripts: Record<string, Script> = {
    [q('prep')]: ({ input }) => [reply({ n: input.n, prepped: num(input.n) + 1 })],
    [q('after')]: ({ input }) => [reply({ ...input, after: true })],
    [q('send')]: ({ input }) => [reply({ n: input.n, sent: true })],
    [q('poll')]: ({ input, attempt }) => [reply({ n: input.n, polls: attempt })],
    // Suspends (waits for a signal), then, sent again with the signal, replies with it.
    [q('hold')]: ({ input }) =>
      input.signal === undefined
        ? [{ body: JSON.stringify({ reason: 'waiting for a go' }), type: 'suspend' as const }]
        : [reply({ n: input.n, signal: input.signal })],
    // Sends no reply: hands its token over, and the answer comes through POST /api/callback/{token}.
    [q('hook')]: ({ input, token }) => {
      callbacks.push(
        (async () => {
          await sleep(Math.random() * 200);
          const statuses = await postUntil(
            url,
            `/api/callback/${token}`,
            { type: 'success', output: { n: input.n, hooked: true } },
            [200, 409],
          );
          callbackAnswers.set(token, [...(callbackAnswers.get(token) ?? []), ...statuses]);
        })(),
      );
      return [];
    },
  };
  const workers = await startScriptedWorkers(scripts, {
    prefetch: 20,
    delayMs: 40,
    connectionName: `switchyard-test-lang-crash-workers-${suffix}`,
  });
  const signalAnswers = new Map<string, number[]>();
  try {
    serve = await spawnServe(args);
    const jobs = plan(options.jobsPerKind);
    const signalOf = (job: PlannedJob) =>
      postUntil(url, `/api/job/${job.id}/signal/approve`, { approved: job.n }, [200, 202, 409]);
    const drive = async (job: PlannedJob): Promise<void> => {
      await postUntil(url, `/api/workflow/${job.kind}?id=${job.id}`, { n: job.n }, [200, 201]);
      if (job.kind === 'suspender') {
        if (job.mode === 'during')
          await documentWhen(url, job.id, (document) => document.steps.hold?.status === 'suspended');
        signalAnswers.set(
          job.id,
          await postUntil(url, `/api/job/${job.id}/signal/hold`, { go: job.n }, [200, 202, 409]),
        );
        return;
      }
      if (job.kind !== 'approval') return;
      if (job.mode !== 'early')
        await documentWhen(url, job.id, (document) => document.steps.approve?.status === 'running');
      const answers = await signalOf(job);
      if (job.mode === 'after') {
        await documentWhen(url, job.id, ended);
        const late = await signalOf(job);
        // Sent after the step took its signal and the job ended: refused, and nothing changes.
        expect(late.at(-1), `late signal for ${job.id}: ${late}`).toBe(409);
        answers.push(...late.map((status) => (status === 409 ? -409 : status)));
      }
      signalAnswers.set(job.id, answers);
    };
    const chunk = Math.ceil(jobs.length / (options.kills + 1));
    const drivers: Promise<void>[] = [];
    const unfinishedAtKill: number[] = [];
    for (let kill = 0; kill <= options.kills; kill++) {
      drivers.push(...jobs.slice(kill * chunk, (kill + 1) * chunk).map(drive));
      if (kill === options.kills) break;
      await sleep(300 + Math.random() * 900);
      unfinishedAtKill.push(
        await fetch(`${url()}/api/jobs?status=all&limit=1000&detail=1`)
          .then(async (response) => {
            const page = (await response.json()) as { jobs: { status: string }[] };
            return page.jobs.filter(
              (job) => !['completed', 'failed', 'cancelled', 'aborted'].includes(job.status),
            ).length;
          })
          .catch(() => -1),
      );
      await serve.kill('SIGKILL');
      serve = await spawnServe(args);
    }
    await Promise.all(drivers);
    const settleMs = options.settleMs ?? 180_000;
    const documents = await Promise.all(jobs.map((job) => documentWhen(url, job.id, ended, settleMs))).catch(
      (error) => {
        throw new Error(`not every job ended: ${(error as Error).message}\n${serve?.output().slice(-3000)}`);
      },
    );
    await Promise.all(callbacks);

    let lost = 0;
    let doubled = 0;
    const double = (what: string, ok: boolean) => {
      if (!ok) doubled++;
      expect(ok, what).toBe(true);
    };
    for (const [index, document] of documents.entries()) {
      const job = jobs[index] as PlannedJob;
      const got = { kind: job.kind, status: document.status, result: document.result };
      const want = { kind: job.kind, status: 'completed', result: job.expected };
      if (JSON.stringify(got) !== JSON.stringify(want)) lost++;
      expect(got, `${job.id} (${job.kind}${job.mode ? `, signal ${job.mode}` : ''})`).toEqual(want);
      // The engine's view: every step one attempt, a loop one per iteration.
      for (const [step, state] of Object.entries(document.steps)) {
        // A suspended step is sent again with its signal: its second attempt.
        const attempts = step === 'poll' ? LOOP_ITERATIONS : step === 'hold' ? 2 : 1;
        double(`${job.id} ${step}: ${state.attempt} attempts`, state.attempt === attempts);
        if (step === 'poll') {
          double(`${job.id} poll: ${state.iterations} iterations`, state.iterations === LOOP_ITERATIONS);
          expect(state.attempts.map((attempt) => attempt.outcome)).toEqual([
            'repeated',
            'repeated',
            'completed',
          ]);
        }
      }
      if (job.kind === 'approval' || job.kind === 'suspender') {
        const answers = signalAnswers.get(job.id) ?? [];
        const accepted = answers.filter((status) => status === 200 || status === 202).length;
        // A signal whose answer was lost to a kill is sent again and refused (409): never taken twice.
        double(`${job.id} signal answers ${answers}`, accepted <= 1);
      }
    }
    // The workers' view: one attempt per step, a loop's attempts 1..3 (a re-sent request repeats one).
    for (const [correlationId, seen] of workers.attemptsByRequest()) {
      const step = correlationId.slice(correlationId.indexOf(':') + 1);
      const want = step === 'poll' ? [1, 2, 3] : step === 'hold' ? [1, 2] : [1];
      double(`attempts of ${correlationId}: ${seen}`, JSON.stringify(seen) === JSON.stringify(want));
    }
    const tokensTaken = [...callbackAnswers.values()].map(
      (answers) => answers.filter((s) => s === 200).length,
    );
    double(
      `callbacks taken per token: ${tokensTaken}`,
      tokensTaken.every((count) => count <= 1),
    );
    const all = [...signalAnswers.values()].flat();
    const callbackStatuses = [...callbackAnswers.values()].flat();
    return {
      kills: options.kills,
      jobs: jobs.length,
      unfinishedAtKill,
      requests: new Set(workers.deliveries.map((d) => `${d.correlationId}#${d.attempt}`)).size,
      duplicateDeliveries: workers.duplicates(),
      signalsKept: all.filter((status) => status === 202).length,
      signalsTaken: all.filter((status) => status === 200).length,
      signalsRefusedAfter: all.filter((status) => status === -409).length,
      callbacksTaken: callbackStatuses.filter((status) => status === 200).length,
      callbacksRefused: callbackStatuses.filter((status) => status === 409).length,
      lost,
      doubled,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await serve?.kill('SIGTERM');
    await workers.stop();
    await deleteQueues([...Object.keys(scripts), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  }
}
