import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobDocument } from '../../functions/api/job-document.js';
import { startTestServe, type TestServe } from '../support/local-serve.js';
import { eventually, uniqueName } from '../support/rabbitmq.js';
import { runawayDocument } from '../support/runaway-tree.js';

/*
 * A tree that grows without end from one start (issue 28, finding 7): two workflows that fan out
 * and call each other, with no worker in the way, as fast as the manager can create jobs. The
 * 16-deep call limit bounds each chain; the tree's quota bounds the tree, and cancelling its root
 * stops it at once.
 */

/** Every job of these workflows (top-level and children, any status), counted through the API. */
async function countJobs(serve: TestServe, workflows: readonly string[], status = 'all'): Promise<number> {
  let count = 0;
  for (const workflow of workflows) {
    let cursor: string | undefined;
    do {
      const query = `workflow=${workflow}&status=${status}&children=1&limit=1000${cursor ? `&cursor=${cursor}` : ''}`;
      const { body } = await serve.api<{ jobs: string[]; cursor?: string }>('GET', `/api/jobs?${query}`);
      count += body.jobs.length;
      cursor = body.cursor;
    } while (cursor);
  }
  return count;
}

/** Whether every job of these workflows has ended (none running or paused). */
async function allEnded(serve: TestServe, workflows: readonly string[]): Promise<boolean> {
  return (await countJobs(serve, workflows, 'running')) + (await countJobs(serve, workflows, 'paused')) === 0;
}

async function start(serve: TestServe, workflow: string): Promise<string> {
  const started = await serve.api<{ id: string }>('POST', `/api/workflow/${workflow}`, '{}');
  expect(started.status).toBe(201);
  return started.body.id;
}

describe('bounded job trees on serve (RabbitMQ and SQLite)', () => {
  describe('a small quota', () => {
    const QUOTA = 40;
    const workflows = [uniqueName('ping'), uniqueName('pong')] as const;
    let serve: TestServe;
    beforeAll(async () => {
      serve = await startTestServe(runawayDocument(workflows), { maxTreeJobs: QUOTA });
    });
    afterAll(async () => {
      await serve?.stop();
    });

    it('stops the runaway tree at its quota, failing the step that would pass it, naming the quota and the root', async () => {
      // Act
      const id = await start(serve, workflows[0]);
      const root = await eventually(
        'the root to end',
        async () => {
          const { body } = await serve.api<JobDocument>('GET', `/api/job/${id}?wait=2`);
          return body.status === 'running' ? undefined : body;
        },
        60_000,
      );
      await eventually('every job of the tree to end', () => allEnded(serve, workflows), 60_000);

      // Assess
      expect(root.status).toBe('failed');
      expect(root.error?.message).toContain(`the tree of job ${id} would hold`);
      expect(root.error?.message).toContain(`over its quota of ${QUOTA}`);
      const jobs = await countJobs(serve, workflows);
      expect(jobs).toBeGreaterThan(QUOTA / 2);
      expect(jobs).toBeLessThanOrEqual(QUOTA + 1);
    }, 90_000);
  });

  describe('a quota far from reached', () => {
    const QUOTA = 100_000;
    const workflows = [uniqueName('zig'), uniqueName('zag')] as const;
    let serve: TestServe;
    beforeAll(async () => {
      serve = await startTestServe(runawayDocument(workflows), { maxTreeJobs: QUOTA });
    });
    afterAll(async () => {
      await serve?.stop();
    });

    it('stops the growth when the root is cancelled: no job appears after the cancel', async () => {
      // Prepare: the tree grows, as fast as serve can make jobs.
      const id = await start(serve, workflows[0]);
      await eventually(
        'the tree to grow past 300 jobs',
        async () => (await countJobs(serve, workflows)) > 300,
        60_000,
      );

      // Act
      const cancelled = await serve.api<JobDocument>('DELETE', `/api/job/${id}`);
      const atCancel = await countJobs(serve, workflows);
      await eventually('the cascade to end every job of the tree', () => allEnded(serve, workflows), 60_000);

      // Assess
      expect(cancelled.status).toBe(200);
      expect(atCancel).toBeLessThan(QUOTA);
      expect(await countJobs(serve, workflows)).toBe(atCancel);
      const root = (await serve.api<JobDocument>('GET', `/api/job/${id}`)).body;
      expect(root.status).toBe('cancelled');
    }, 120_000);
  });
});
