import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  applyEvent,
  createJob,
  JOB_FORMAT_VERSION,
  JobFormatError,
  type JobJson,
  type JobRecord,
  jobFromJson,
} from '../../../engine/index.js';
import { compiled } from '../../support/simulated-world.js';

// Written by Switchyard before a job's steps became a persistent list (each transition copied an
// array): a 40-step job halfway, its `sink` waiting on 16 of its 36 dependencies.
const fixtures = new URL('../../fixtures/jobs/', import.meta.url);
const workflow = compiled(readFileSync(new URL('wide-40.yaml', fixtures), 'utf8'));
const storedText = readFileSync(new URL('wide-40-halfway.json', fixtures), 'utf8');
const NOW = 1_767_225_600_000;

type Awaited = { step: string; attempt: number };

/** Replies to every request until none is left; each output names its step. */
function runToEnd(from: JobRecord, awaited: readonly Awaited[], at: number): JobRecord {
  let job = from;
  const pending = [...awaited];
  for (let request = pending.shift(); request; request = pending.shift()) {
    const next = applyEvent(
      workflow,
      job,
      { type: 'reply', step: request.step, attempt: request.attempt, output: { [request.step]: 1 } },
      { now: at },
    );
    job = next.job;
    pending.push(...next.requests);
  }
  return job;
}

describe('A job stored by an earlier version', () => {
  it('loads with the same JSON it was stored with', () => {
    const job = jobFromJson(JSON.parse(storedText) as JobJson);
    expect(job.steps.length).toBe(40);
    expect(`${JSON.stringify(job, null, 2)}\n`).toBe(storedText);
  });

  it('runs on to the end as a job started now does', () => {
    const stored = jobFromJson(JSON.parse(storedText) as JobJson);
    const running = stored.steps.toArray().filter((step) => step.status === 'running');
    expect(running).toHaveLength(16);
    const awaited = running.map((step) => ({ step: step.name, attempt: step.attempts }));
    const resumed = runToEnd(stored, awaited, NOW + 5_000);

    expect(resumed.status).toBe('completed');
    expect(resumed.steps.find((step) => step.name === 'sink')?.status).toBe('completed');
    expect(resumed.steps.toArray().filter((step) => step.status === 'skipped')).toHaveLength(4);
    const created = createJob(workflow, { id: stored.id, input: stored.input }, { now: NOW }).job;
    const started = applyEvent(
      workflow,
      created,
      { type: 'reply', step: 'start', output: { n: 1 } },
      { now: NOW },
    );
    const fresh = runToEnd(started.job, started.requests, NOW);
    expect(resumed.result).toEqual(fresh.result);
    expect(resumed.steps.map((step) => [step.name, step.status])).toEqual(
      fresh.steps.map((step) => [step.name, step.status]),
    );
  });
});

describe('The format version of stored jobs (a deploy runs old and new code side by side)', () => {
  it('is written with every new job, and read back as it was', () => {
    const created = createJob(
      workflow,
      { id: 'f0f0f0f0-0000-4000-8000-000000000001', input: {} },
      { now: NOW },
    ).job;
    expect(created.formatVersion).toBe(JOB_FORMAT_VERSION);
    const json = JSON.parse(JSON.stringify(created)) as JobJson;
    expect(json.formatVersion).toBe(JOB_FORMAT_VERSION);
    expect(jobFromJson(json).formatVersion).toBe(JOB_FORMAT_VERSION);
  });

  it('a record without one (written before formats were numbered, as the fixture) is format 1, read unchanged', () => {
    const stored = JSON.parse(storedText) as JobJson;
    expect(stored.formatVersion).toBeUndefined();
    expect(JOB_FORMAT_VERSION).toBe(1);
    expect(`${JSON.stringify(jobFromJson(stored), null, 2)}\n`).toBe(storedText);
  });

  it('a record of a newer format is refused with an error that says so, not misread', () => {
    const newer = { ...(JSON.parse(storedText) as JobJson), formatVersion: JOB_FORMAT_VERSION + 1 };
    expect(() => jobFromJson(newer)).toThrow(JobFormatError);
    expect(() => jobFromJson(newer)).toThrow(
      `job 6f1c3a52-1b0e-4c55-9d6a-2f3f6c1b7e01 is stored in format ${JOB_FORMAT_VERSION + 1}, newer than this code's ${JOB_FORMAT_VERSION}`,
    );
  });
});
