import { describe, expect, it } from 'vitest';
import { parseStartAt } from '../../../functions/api/start-at.js';
import type { WorkflowSchedulesDocument } from '../../../functions/api/workflow-documents.js';
import { callApi, errorOf, worldApi } from '../../support/api-calls.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const WORKFLOWS = `workflows:
  - name: report
    steps:
      - name: build
    schedules:
      - cron: "0 6 * * 1-5"
        timezone: Europe/Paris
        input: { kind: daily }
      - cron: "30 23 L * *"
        catchUp: latest
  - name: plain
    steps:
      - name: a
`;
const ID = '3f2a9c1e-7b44-4c1d-9e8f-0a1b2c3d4e5f';

async function api() {
  const world = new SimulatedWorld();
  world.now = Date.parse('2026-05-07T12:00:00Z'); // a Thursday
  await world.register(WORKFLOWS);
  const deps = worldApi(world, { maxBodyBytes: 64 * 1024 });
  const call = (method: string, path: string, query: Record<string, string> = {}, body = '') =>
    callApi(deps, { method, path, query, body });
  return { world, call };
}

describe('API: delayed starts (?at=)', () => {
  it('stores the job as scheduled; it starts at that time; cancel ends it before', async () => {
    const { world, call } = await api();
    const started = await call(
      'POST',
      '/api/workflow/report',
      { at: '2026-05-07T14:00:30+02:00', id: ID },
      '{"x":1}',
    );
    expect([started.status, started.body]).toEqual([201, JSON.stringify({ id: ID })]);
    const job = JSON.parse((await call('GET', `/api/job/${ID}`)).body) as Record<string, unknown>;
    expect(job.status).toBe('scheduled');
    expect(world.take()).toEqual([]);

    const listed = JSON.parse(
      (await call('GET', '/api/jobs', { status: 'scheduled', detail: '1' })).body,
    ) as {
      jobs: { uuid: string; startAt: string }[];
    };
    expect(listed.jobs.map((entry) => [entry.uuid, entry.startAt])).toEqual([
      [ID, '2026-05-07T12:00:30.000Z'],
    ]);
    // The same start again is the idempotent 200.
    expect(
      (await call('POST', '/api/workflow/report', { at: '2026-05-07T14:00:30+02:00', id: ID }, '{"x":1}'))
        .status,
    ).toBe(200);

    await world.advance(30_000);
    expect(JSON.parse((await call('GET', `/api/job/${ID}`)).body).status).toBe('running');
    expect(world.take().map((request) => request.body)).toEqual([{ x: 1 }]);

    const later = JSON.parse(
      (await call('POST', '/api/workflow/report', { at: '2026-05-08T00:00:00Z' })).body,
    ) as { id: string };
    const cancelled = await call('DELETE', `/api/job/${later.id}`);
    expect(cancelled.status).toBe(200);
    await world.advance(86_400_000);
    expect(JSON.parse((await call('GET', `/api/job/${later.id}`)).body).status).toBe('cancelled');
    expect(world.take()).toEqual([]);
  });

  it.each([
    ['2026-05-07T11:59:59Z', 'is in the past'],
    ['2026-05-07 13:00:00Z', 'must be an RFC 3339 time'],
    ['2026-05-07T13:00Z', 'must be an RFC 3339 time'],
    ['2026-02-30T13:00:00Z', 'must be an RFC 3339 time'],
    ['tomorrow', 'must be an RFC 3339 time'],
    ['', 'must be an RFC 3339 time'],
    ['2030-05-07T13:00:00Z', 'more than a year ahead'],
  ])('refuses at=%j with a 400 and creates nothing', async (at, message) => {
    const { world, call } = await api();
    const refused = await call('POST', '/api/workflow/report', { at, id: ID });
    expect([refused.status, errorOf(refused).code]).toEqual([400, 'bad_request']);
    expect(errorOf(refused).message).toContain(message);
    expect(await world.store.getJob(ID)).toBeUndefined();
    expect(world.timers.size).toBe(0);
  });

  it('reads offsets and fractions exactly', () => {
    const now = Date.parse('2026-05-07T12:00:00Z');
    expect(parseStartAt('2026-05-07T08:00:00.250-04:00', now)).toBe(Date.parse('2026-05-07T12:00:00.250Z'));
    expect(parseStartAt('2026-05-07t12:00:01z', now)).toBe(now + 1000);
  });
});

describe('API: schedules', () => {
  it('lists a workflow’s schedules with their next ticks, and its scheduled jobs soonest first', async () => {
    const { call } = await api();
    await call('POST', '/api/workflow/report', { at: '2026-05-09T00:00:00Z', id: ID });
    const sooner = JSON.parse(
      (await call('POST', '/api/workflow/report', { at: '2026-05-08T00:00:00Z' })).body,
    ) as { id: string };

    const answer = await call('GET', '/api/workflow/report/schedules', { ticks: '3' });
    expect(answer.status).toBe(200);
    const document = JSON.parse(answer.body) as WorkflowSchedulesDocument;
    expect(document).toMatchObject({ name: 'report', version: 1, enabled: true, scheduledCount: 2 });
    expect(document.schedules).toEqual([
      {
        cron: '0 6 * * 1-5',
        timezone: 'Europe/Paris',
        catchUp: 'all',
        input: { kind: 'daily' },
        key: expect.stringMatching(/^[0-9a-f]{16}$/),
        nextTicks: ['2026-05-08T04:00:00.000Z', '2026-05-11T04:00:00.000Z', '2026-05-12T04:00:00.000Z'],
      },
      {
        cron: '30 23 L * *',
        timezone: 'UTC',
        catchUp: 'latest',
        input: {},
        key: expect.stringMatching(/^[0-9a-f]{16}$/),
        nextTicks: ['2026-05-31T23:30:00.000Z', '2026-06-30T23:30:00.000Z', '2026-07-31T23:30:00.000Z'],
      },
    ]);
    expect(document.scheduled.map((job) => [job.id, job.startAt])).toEqual([
      [sooner.id, '2026-05-08T00:00:00.000Z'],
      [ID, '2026-05-09T00:00:00.000Z'],
    ]);

    const all = JSON.parse((await call('GET', '/api/schedules')).body) as WorkflowSchedulesDocument[];
    expect(all.map((entry) => entry.name)).toEqual(['report']);
  });

  it('answers 404 for an unknown workflow and 400 for a bad ?ticks', async () => {
    const { call } = await api();
    expect((await call('GET', '/api/workflow/nope/schedules')).status).toBe(404);
    expect((await call('GET', '/api/workflow/report/schedules', { ticks: '0' })).status).toBe(400);
  });

  it('answers in the request’s namespace, with plain names: another namespace’s report is apart', async () => {
    // Prepare: report in default (api()), and a report of its own in team-a with one schedule.
    const { call } = await api();
    const teamReport = `workflows:
  - name: report
    steps:
      - name: build
    schedules:
      - cron: "0 7 * * *"
`;
    expect((await call('PUT', '/api/ns/team-a/workflow/report', {}, teamReport)).status).toBe(201);
    await call('POST', '/api/ns/team-a/workflow/report', { at: '2026-05-08T00:00:00Z', id: ID });

    // Act
    const ownDocument = await call('GET', '/api/ns/team-a/workflow/report/schedules', { ticks: '1' });
    const teamListing = await call('GET', '/api/ns/team-a/schedules', { ticks: '1' });
    const defaultDocument = await call('GET', '/api/workflow/report/schedules', { ticks: '1' });
    const defaultListing = await call('GET', '/api/schedules', { ticks: '1' });
    const unknownThere = await call('GET', '/api/ns/team-b/workflow/report/schedules');

    // Assess
    const team = JSON.parse(ownDocument.body) as WorkflowSchedulesDocument;
    expect([ownDocument.status, team.name, team.scheduledCount]).toEqual([200, 'report', 1]);
    expect(team.schedules.map((schedule) => [schedule.cron, schedule.nextTicks])).toEqual([
      ['0 7 * * *', ['2026-05-08T07:00:00.000Z']],
    ]);
    expect(team.scheduled.map((job) => job.id)).toEqual([ID]);
    const listed = JSON.parse(teamListing.body) as WorkflowSchedulesDocument[];
    expect(listed.map((entry) => [entry.name, entry.schedules.length])).toEqual([['report', 1]]);
    const own = JSON.parse(defaultDocument.body) as WorkflowSchedulesDocument;
    expect([own.schedules.length, own.scheduledCount]).toEqual([2, 0]);
    const defaults = JSON.parse(defaultListing.body) as WorkflowSchedulesDocument[];
    expect(defaults.map((entry) => [entry.name, entry.schedules.length])).toEqual([['report', 2]]);
    expect(unknownThere.status).toBe(404);
  });
});
