import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import type { WorkflowDefinitionDocument } from '../../functions/api/workflow-documents.js';
import { createWorker, type Worker } from '../../functions/worker/index.js';
import { flood } from '../support/connection-flood.js';
import { deleteQueues, eventually, openTestChannel, uniqueName } from '../support/rabbitmq.js';
import { runawayEntries } from '../support/runaway-tree.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';
import { reportFigures, scaled } from '../support/soak.js';

/*
 * Issue 28's attacks, mixed and repeated, while serve is killed (SIGKILL) between rounds and team-b's
 * jobs run on: a hostile team-a admin walks into team-b through encoded names, registers a step on
 * team-b's queue, starts jobs whose expressions would freeze or exhaust serve (a catastrophic regex,
 * an N×N mapping), starts a tree that would grow without end, forges aborts of team-b's running steps
 * on the reply queue, and floods serve with idle connections. `npm test` runs 2 rounds; `npm run soak`
 * 12 (TENANT_ROUNDS overrides both). RELIABILITY.md reports the soak's figures.
 *
 * Expected, whatever the round: 0 crashes (serve ends only by our SIGKILLs), 0 crossings (no 2xx for
 * team-a on anything of team-b's, team-b's worker sees team-b's requests only, no team-b job aborted
 * or failed), 0 hangs (healthz answers during every flood, every job ends).
 */
const ROUNDS = scaled(2, 12, 'TENANT_ROUNDS');
const TEAM_B_JOBS_PER_ROUND = scaled(15, 40);
const IDLE_SOCKETS = 300;
const TREE_QUOTA = 30;
/** A bound on an answer, so that a frozen serve fails the test instead of holding it. */
const ANSWER_WITHIN_MS = 15_000;

const suffix = uniqueName('tenants');
const prefixA = `a-${suffix}.`;
const prefixB = `b-${suffix}.`;
const ROOT = `root-${suffix}`;
const replyQueue = `replies-${suffix}`;

const TEAM_B = `namespace: team-b
queuePrefix: ${prefixB}
workflows:
  - name: steady
    steps:
      - { name: work, queue: work }
      - { name: more, queue: work, depends: [ work ] }
`;
const TEAM_A = `namespace: team-a
queuePrefix: ${prefixA}
workflows:
  - name: regex
    steps:
      - name: check
        queue: check
        when: 'input.name.matches("^([a-zA-Z0-9]+\\\\s?)*$")'
  - name: square
    steps:
      - name: big
        queue: big
        input: '{"x": input.l.map(e, input.l)}'
  - name: fetched-square
    steps:
      - { name: fetch, queue: fetch }
      - name: big
        queue: big
        depends: [ fetch ]
        input: '{"x": input.l.map(e, input.l)}'
${runawayEntries(['ping', 'pong'])}`;

/** team-a's step on team-b's queue: refused at registration. */
const TRESPASS = `name: trespass
steps:
  - { name: charge, queue: ${prefixB}work }
`;

/** Paths a team-a token tries into team-b (decoded, each names team-b's `steady` or its jobs). */
const WALKS = [
  ['GET', '/api/ns/team-a/workflow/team-b%2Fsteady'],
  ['POST', '/api/ns/team-a/workflow/team-b%2Fsteady'],
  ['GET', '/api/ns/team-a/workflow/..%2Fteam-b%2Fsteady/definition'],
  ['GET', '/api/ns/team-a/workflow/%2E%2E%2Fteam-b%2Fsteady'],
  ['GET', '/api/ns/team-b/workflow/steady'],
  ['POST', '/api/ns/team-b/workflow/steady'],
  ['GET', '/api/ns/TEAM-B/workflow/steady'],
  ['DELETE', '/api/ns/team-b/workflow/steady'],
  ['GET', '/api/workflow/team-b%2Fsteady'],
  ['GET', '/api/ns/team-b/jobs?status=all'],
] as const;

interface Gate {
  promise: Promise<void>;
  resolve(): void;
}

function openGate(): Gate {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

interface Answer<T> {
  status: number;
  body: T;
}

describe('Tenant attacks mixed with SIGKILLs (serve as a process, RabbitMQ, SQLite)', {
  timeout: 900_000,
}, () => {
  let dir: string;
  let args: string[];
  let serve: ServeProcess;
  let worker: Worker;
  let teamAWorker: Worker;
  let tokenA: string;
  let tokenB: string;
  const seenByTeamBWorker: string[] = [];
  /** team-b's worker holds its answers until the round's forgeries are out, so they meet running steps. */
  let gate = openGate();
  const crossings: string[] = [];

  const api = async <T = Record<string, unknown>>(
    method: string,
    path: string,
    token: string,
    body?: string,
  ): Promise<Answer<T>> => {
    const response = await fetch(`${serve.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}` },
      body,
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (the metrics)
    }
    return { status: response.status, body: parsed as T };
  };
  const startJob = async (namespace: string, workflow: string, token: string, input: object) => {
    const started = await api<{ id: string }>(
      'POST',
      `/api/ns/${namespace}/workflow/${workflow}`,
      token,
      JSON.stringify(input),
    );
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    return started.body.id;
  };
  const ended = (namespace: string, id: string, token: string) =>
    eventually(
      `${namespace} job ${id} to end`,
      async () => {
        const { body } = await api<JobDocument>('GET', `/api/ns/${namespace}/job/${id}`, token);
        return ['running', 'queued', 'paused'].includes(body.status) ? undefined : body;
      },
      120_000,
    );

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-tenants-'));
    await writeFile(join(dir, 'team-a.yaml'), TEAM_A);
    await writeFile(join(dir, 'team-b.yaml'), TEAM_B);
    args = [
      ...['--config', join(dir, 'team-a.yaml'), join(dir, 'team-b.yaml')],
      ...['--db', join(dir, 'switchyard.db'), '--reply-queue', replyQueue, '--token', ROOT],
      ...['--reply-auth', '--max-tree-jobs', String(TREE_QUOTA), '--log-format', 'json'],
    ];
    serve = await spawnServe(args, {}, 60_000);
    const created = async (namespace: string, role: string) => {
      const answer = await api<{ secret: string }>(
        'POST',
        '/api/tokens',
        ROOT,
        JSON.stringify({ namespace, role, description: `${namespace} ${role}` }),
      );
      expect(answer.status).toBe(201);
      return answer.body.secret;
    };
    tokenA = await created('team-a', 'admin');
    tokenB = await created('team-b', 'run');
    worker = createWorker({
      queue: `${prefixB}work`,
      handler: async (input, context) => {
        seenByTeamBWorker.push(context.correlationId);
        await gate.promise;
        return { ...input, worked: true };
      },
    });
    await worker.start();
    // team-a's own worker answers with the list that its next step squares.
    teamAWorker = createWorker({
      queue: `${prefixA}fetch`,
      handler: async () => ({ l: Array.from({ length: 20_000 }, (_, n) => n) }),
    });
    await teamAWorker.start();
  });

  afterAll(async () => {
    await worker?.stop();
    await teamAWorker?.stop();
    await serve?.kill('SIGTERM');
    await deleteQueues([
      `${prefixB}work`,
      ...['check', 'big', 'fetch'].map((queue) => `${prefixA}${queue}`),
      replyQueue,
      `${replyQueue}.dead-letters`,
      `${replyQueue}.poisoned`,
    ]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(`holds every boundary over ${ROUNDS} rounds of attacks, each ended by a SIGKILL`, async () => {
    const inspector = await openTestChannel();
    const teamBJobs: string[] = [];
    const attacks = { walks: 0, trespasses: 0, regex: 0, squares: 0, trees: 0, forged: 0, floods: 0 };
    const teamAJobs: { id: string; kind: 'regex' | 'square' | 'tree' }[] = [];
    let kills = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // team-b works on; its first request is out, and held, before the forgeries.
        const seenBefore = seenByTeamBWorker.length;
        for (let n = 0; n < TEAM_B_JOBS_PER_ROUND; n++)
          teamBJobs.push(await startJob('team-b', 'steady', tokenB, { round, n }));
        await eventually("team-b's worker to take a request", () => seenByTeamBWorker.length > seenBefore);

        // team-a walks into team-b's names.
        for (const [method, path] of WALKS) {
          const answer = await api(method, path, tokenA, method === 'POST' ? '{}' : undefined);
          attacks.walks++;
          if (answer.status < 400 || ![400, 403, 404].includes(answer.status))
            crossings.push(`${method} ${path}: ${answer.status}`);
        }
        // team-a puts a step on team-b's queue.
        // Registered, it is team-a's prefix before the name (workflows.md "The prefix"), never team-b's queue.
        const trespass = await api('PUT', '/api/ns/team-a/workflow/trespass', tokenA, TRESPASS);
        attacks.trespasses++;
        if (trespass.status < 300) {
          const stored = await api<WorkflowDefinitionDocument>(
            'GET',
            '/api/ns/team-a/workflow/trespass/definition',
            tokenA,
          );
          const queue = stored.body.definition.steps[0]?.queue ?? '';
          if (!queue.startsWith(prefixA)) crossings.push(`trespass registered on ${queue}`);
        } else if (trespass.status !== 400) crossings.push(`trespass answered ${trespass.status}`);
        // team-a's queue listing holds none of team-b's queues.
        const queues = await api<{ queues: { queue: string }[] }>('GET', '/api/ns/team-a/queues', tokenA);
        for (const { queue } of queues.body.queues ?? [])
          if (queue.startsWith(prefixB)) crossings.push(`team-a sees queue ${queue}`);

        // team-a's expressions that would freeze or exhaust serve, and a tree without end.
        teamAJobs.push({
          id: await startJob('team-a', 'regex', tokenA, { name: `${'a'.repeat(32 + round)}!` }),
          kind: 'regex',
        });
        attacks.regex++;
        // From the start's own input: refused at once, naming the step, nothing created.
        const square = await api(
          'POST',
          '/api/ns/team-a/workflow/square',
          tokenA,
          JSON.stringify({ l: Array.from({ length: 20_000 }, (_, n) => n) }),
        );
        expect([square.status, JSON.stringify(square.body)]).toEqual([
          413,
          expect.stringContaining('step \\"big\\"'),
        ]);
        // From a worker's reply: the step that would build the request fails, naming itself.
        teamAJobs.push({ id: await startJob('team-a', 'fetched-square', tokenA, {}), kind: 'square' });
        attacks.squares += 2;
        teamAJobs.push({ id: await startJob('team-a', 'ping', tokenA, {}), kind: 'tree' });
        attacks.trees++;

        // Forged aborts of team-b's running steps, with the job ids as if leaked.
        for (const id of teamBJobs.slice(-TEAM_B_JOBS_PER_ROUND)) {
          for (const step of ['work', 'more'])
            inspector.channel.sendToQueue(replyQueue, Buffer.from('{"reason":"forged"}'), {
              correlationId: `${id}:${step}`,
              type: 'abort',
              headers: { 'x-attempt': 1 },
            });
          attacks.forged += 2;
        }

        gate.resolve();

        // Idle connections; healthz must still answer.
        const sockets = await flood(serve.url, IDLE_SOCKETS, 'idle');
        attacks.floods++;
        expect((await api('GET', '/healthz', tokenA)).status).toBe(200);
        sockets.release();

        // serve has not died on its own; then it is killed, mid-work, and started again.
        expect(serve.child.exitCode, serve.output().slice(-3000)).toBeNull();
        expect(serve.child.signalCode, serve.output().slice(-3000)).toBeNull();
        await serve.kill('SIGKILL');
        kills++;
        serve = await spawnServe(args, {}, 60_000);
        gate = openGate();
      }
      gate.resolve();

      // Assess: every job ends; team-b's completed; team-a's failed or were skipped as their attacks say.
      for (const id of teamBJobs) {
        const done = await ended('team-b', id, tokenB);
        if (done.status !== 'completed' || done.result?.worked !== true)
          crossings.push(
            `team-b job ${id} ended ${done.status}: ${JSON.stringify(done.error ?? done.result)}`,
          );
      }
      const outcomes: Record<string, string[]> = { regex: [], square: [], tree: [] };
      for (const { id, kind } of teamAJobs) {
        const done = await ended('team-a', id, tokenA);
        outcomes[kind]?.push(done.status === 'failed' ? `failed: ${done.error?.message}` : done.status);
      }
      // The catastrophic pattern does not match (linear time); the step is skipped and the job completes.
      expect(new Set(outcomes.regex)).toEqual(new Set(['completed']));
      for (const outcome of outcomes.square ?? []) expect(outcome).toMatch(/^failed: .*big/);
      for (const outcome of outcomes.tree ?? []) expect(outcome).toContain(`over its quota of ${TREE_QUOTA}`);
      const treeJobs = await api<{ jobs: string[] }>(
        'GET',
        '/api/ns/team-a/jobs?workflow=pong&status=all&children=1&limit=1000',
        tokenA,
      );
      expect(treeJobs.body.jobs.length).toBeLessThanOrEqual(attacks.trees * (TREE_QUOTA + 1));

      // team-b's worker saw team-b's requests only.
      const teamB = new Set(teamBJobs);
      for (const correlationId of seenByTeamBWorker)
        if (!teamB.has(correlationId.split(':')[0] as string))
          crossings.push(`team-b's worker got ${correlationId}`);
      expect(crossings).toEqual([]);
      expect((await api('GET', '/healthz', tokenA)).status).toBe(200);
      reportFigures('tenant attacks with SIGKILLs', {
        rounds: ROUNDS,
        kills,
        teamBJobs: teamBJobs.length,
        teamAJobs: teamAJobs.length,
        ...attacks,
        crossings: crossings.length,
        crashes: 0,
      });
    } finally {
      await inspector.model.close().catch(() => {});
    }
  });
});
