import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScheduleDefinition } from '../../engine/definition/types.js';
import { scheduleKey, tickJobId } from '../../engine/schedule/identity.js';
import { dueTicks } from '../../engine/schedule/ticks.js';
import { SqliteStore } from '../../functions/adapters/sqlite/store.js';
import type { JobDocument } from '../../functions/api/job-document.js';
import type { WorkflowSchedulesDocument } from '../../functions/api/workflow-documents.js';
import { describeRun, runCli } from '../support/cli-process.js';
import { type PlainWorkers, startPlainWorkers } from '../support/original-worker.js';
import { deleteQueues, eventually, uniqueName } from '../support/rabbitmq.js';
import { type ServeProcess, spawnServe } from '../support/serve-process.js';

const suffix = uniqueName('schedules');
const q = (name: string) => `${name}-${suffix}`;
const WORKFLOW = `report-${suffix}`;
const HALF_HOURLY: ScheduleDefinition = { cron: '*/30 * * * *', input: { kind: 'half-hourly' } };
const HOURLY: ScheduleDefinition = { cron: '0 * * * *', timezone: 'Europe/Paris', catchUp: 'latest' };

const WORKFLOWS = `workflows:
  - name: ${WORKFLOW}
    steps:
      - { name: build, queue: ${q('build')} }
    schedules:
      - cron: "*/30 * * * *"
        input: { kind: half-hourly }
      - cron: "0 * * * *"
        timezone: Europe/Paris
        catchUp: latest
`;
const HOURS = 3_600_000;

/**
 * serve (its own process, RabbitMQ, SQLite) down for the last 3 hours: on start it catches up the
 * half-hourly schedule's 6 missed ticks and only the latest of the hourly one, each under its derived
 * id; a restart whose cursor did not move (a crash mid-tick) starts none of them again; `submit --at`
 * starts a job at its time.
 */
describe('serve: schedules and delayed starts', { timeout: 120_000 }, () => {
  let dir: string;
  let dbPath: string;
  let serve: ServeProcess | undefined;
  let workers: PlainWorkers;
  const downSince = Date.now() - 3 * HOURS;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-schedules-'));
    dbPath = join(dir, 'switchyard.db');
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    workers = await startPlainWorkers({ [q('build')]: (input) => ({ built: input.kind ?? 'by hand' }) });
  });

  afterAll(async () => {
    await serve?.kill('SIGKILL');
    await workers?.stop();
    await deleteQueues([q('build'), q('replies')]);
    await rm(dir, { recursive: true, force: true });
  });

  /** Both cursors at `downSince`: serve last handled the ticks up to then (moved back, as after a crash mid-tick). */
  const setCursors = async () => {
    const store = SqliteStore.open(dbPath);
    await store.close();
    const db = new Database(dbPath);
    try {
      for (const schedule of [HALF_HOURLY, HOURLY]) {
        db.prepare(
          'INSERT OR REPLACE INTO schedule_cursors (workflow, schedule, last_tick) VALUES (?, ?, ?)',
        ).run(WORKFLOW, scheduleKey(schedule), downSince);
      }
    } finally {
      db.close();
    }
  };
  const start = async () => {
    serve = await spawnServe([
      '--config',
      join(dir, 'workflows.yaml'),
      '--db',
      dbPath,
      '--reply-queue',
      q('replies'),
    ]);
    return serve.url;
  };
  const call = async <T>(method: string, path: string, body?: string) => {
    const response = await fetch(`${serve?.url}${path}`, { method, body });
    return { status: response.status, body: (await response.json()) as T };
  };
  const jobIds = async () =>
    (
      await call<{ jobs: string[] }>('GET', `/api/jobs?workflow=${WORKFLOW}&status=all&limit=1000`)
    ).body.jobs.sort();
  /** The derived ids of the ticks due since `downSince` (a tick that comes while the test runs is due too). */
  const expectedIds = () =>
    [HALF_HOURLY, HOURLY]
      .flatMap((schedule) =>
        dueTicks(schedule, { after: downSince, now: Date.now() }).ticks.map((tick) =>
          tickJobId(WORKFLOW, scheduleKey(schedule), tick),
        ),
      )
      .sort();

  it('catches up missed ticks once each (all) or the latest (latest), and a restart mid-tick starts none again', async () => {
    await setCursors();
    await start();
    const caughtUp = await eventually('the caught-up jobs', async () => {
      const ids = await jobIds();
      return JSON.stringify(ids) === JSON.stringify(expectedIds()) ? ids : undefined;
    });
    expect(caughtUp.length).toBeGreaterThanOrEqual(7);
    const halfHourly = await call<JobDocument>('GET', `/api/job/${caughtUp[0]}`);
    expect(halfHourly.status).toBe(200);
    await eventually('the caught-up jobs to complete', async () => {
      const completed = await call<{ jobs: string[] }>(
        'GET',
        `/api/jobs?workflow=${WORKFLOW}&status=completed&limit=1000`,
      );
      return completed.body.jobs.length === caughtUp.length || undefined;
    });

    // A crash before the cursors moved: the same ticks are due again after the restart.
    await serve?.kill('SIGKILL');
    await setCursors();
    await start();
    // Its first pass over the schedules ends with this line: the caught-up ticks were handled again.
    await eventually('the restarted serve to pass over its schedules', () =>
      serve?.output().includes('"schedules: next tick"'),
    );
    expect(await jobIds()).toEqual(expectedIds());
    const kinds = await Promise.all(
      (await jobIds()).map(async (id) => (await call<JobDocument>('GET', `/api/job/${id}`)).body),
    );
    expect(kinds.every((job) => job.status === 'completed')).toBe(true);
    expect(kinds.filter((job) => job.input.kind === 'half-hourly')).toHaveLength(caughtUp.length - 1);

    const listed = await call<WorkflowSchedulesDocument>(
      'GET',
      `/api/workflow/${WORKFLOW}/schedules?ticks=2`,
    );
    const nextHalfHour = Math.ceil((Date.now() + 1) / (HOURS / 2)) * (HOURS / 2);
    expect(listed.body.schedules.map((schedule) => schedule.cron)).toEqual(['*/30 * * * *', '0 * * * *']);
    expect(Date.parse(listed.body.schedules[0]?.nextTicks[0] as string)).toBeGreaterThanOrEqual(
      nextHalfHour - HOURS / 2,
    );
  });

  it('submit --at stores a scheduled job that starts at its time, listed by switchyard schedules', async () => {
    // Far enough out that three CLI runs on a busy machine still see the job scheduled.
    const at = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000).toISOString();
    const submitted = await runCli([
      'submit',
      WORKFLOW,
      '--at',
      at,
      '--input',
      '{"kind":"later"}',
      '--url',
      serve?.url as string,
    ]);
    expect(submitted.code, describeRun(submitted)).toBe(0);
    const id = submitted.stdout.trim();
    expect((await call<JobDocument>('GET', `/api/job/${id}`)).body).toMatchObject({
      status: 'scheduled',
      startAt: at,
    });

    const listing = await runCli(['schedules', WORKFLOW, '--output', 'json', '--url', serve?.url as string]);
    expect(listing.code, describeRun(listing)).toBe(0);
    const document = JSON.parse(listing.stdout) as WorkflowSchedulesDocument;
    expect(document.scheduled).toEqual([expect.objectContaining({ id, startAt: at })]);

    const past = await runCli([
      'submit',
      WORKFLOW,
      '--at',
      '2020-01-01T00:00:00Z',
      '--url',
      serve?.url as string,
    ]);
    expect(past.code).not.toBe(0);
    expect(past.stderr).toContain('"at" is in the past');

    const done = await eventually(
      'the delayed job to complete',
      async () => {
        const job = (await call<JobDocument>('GET', `/api/job/${id}`)).body;
        return job.status === 'completed' ? job : undefined;
      },
      50_000,
    );
    expect(done.result).toEqual({ built: 'later' });
    expect(Date.parse(done.steps.build?.startedAt as string)).toBeGreaterThanOrEqual(Date.parse(at));
  });
});
