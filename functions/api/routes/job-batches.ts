import * as z from 'zod/mini';
import { actorOf, isFinished, type JobQuery, type JobRecord } from '../../../engine/index.js';
import { ManagerError } from '../../manager/errors.js';
import { json } from '../http.js';
import { jobFilterQuery, jobQueryOf } from '../job-search.js';
import {
  type ApiDeps,
  type CheckedRequest,
  type NoParameters,
  type ParameterSpecs,
  route,
} from '../router.js';
import { Flag, flagSet, PageCursor, wholeNumber } from '../schemas/parameters.js';
import { refusal } from '../schemas/refusal.js';

/** The most jobs one batch call commands: a larger batch goes on with the cursor it answers. */
export const MAX_BATCH = 100;
/** A dry run counts at most this many jobs (it says when there are more). */
export const MAX_DRY_RUN_COUNT = 100_000;

const batchQuery = {
  ...jobFilterQuery,
  status: {
    ...jobFilterQuery.status,
    description: `${jobFilterQuery.status.description} Default: all.`,
  },
  dryRun: {
    schema: Flag,
    description: `Yes: change nothing; answer how many jobs the filter finds (counted up to ${MAX_DRY_RUN_COUNT}).`,
    emptyIsAbsent: true,
  },
  limit: {
    schema: wholeNumber({ min: 1, max: MAX_BATCH }),
    description: `The most jobs this call commands (default and at most ${MAX_BATCH}).`,
    emptyIsAbsent: true,
  },
  cursor: { schema: PageCursor, description: 'From the previous call.', emptyIsAbsent: true },
} as const satisfies ParameterSpecs;

type BatchRequest = CheckedRequest<NoParameters, typeof batchQuery, NoParameters>;

const BatchDocument = z.object({
  matched: z.int().check(z.meta({ description: 'Jobs the filter found in this call (a dry run: in all).' })),
  more: z.optional(
    z.boolean().check(z.meta({ description: 'A dry run counted its limit: there are more.' })),
  ),
  changed: z.optional(z.array(z.string()).check(z.meta({ description: 'The jobs commanded.' }))),
  refused: z.optional(
    z
      .array(z.object({ uuid: z.string(), message: z.string() }))
      .check(
        z.meta({ description: 'Jobs the command did not apply to (already finished, not failed), and why.' }),
      ),
  ),
  cursor: z.optional(z.string().check(z.meta({ description: 'Call again with it for the next jobs.' }))),
});

type Command = 'cancel' | 'retry';

/** A command applies to a job in these states; others are not read twice (they would be refused). */
const appliesTo: Record<Command, (job: JobRecord) => boolean> = {
  cancel: (job) => !isFinished(job.status),
  retry: (job) => job.status === 'failed' || job.status === 'cancelled' || job.status === 'aborted',
};

/**
 * Cancels or retries the jobs a search finds, at most `limit` per call, newest first; the cursor
 * goes on. A job the command refuses (it ended meanwhile) is named with the reason and the others
 * go on; a store that fails stops the call (503), and what was done stays done.
 */
async function batch(command: Command, request: BatchRequest, deps: ApiDeps) {
  const { dryRun, limit = MAX_BATCH, cursor } = request.query;
  const query: JobQuery = jobQueryOf(request.query, request.namespace, 'all');
  if (flagSet(dryRun)) return json(200, await countMatches(deps, query, cursor));
  const page = await deps.service.queryJobs({ ...query, limit, cursor });
  const changed: string[] = [];
  const refused: { uuid: string; message: string }[] = [];
  for (const job of page.jobs) {
    if (!appliesTo[command](job)) {
      refused.push({ uuid: job.id, message: `job ${job.id} is ${job.status}` });
      continue;
    }
    try {
      const actor = actorOf(request.principal);
      await (command === 'cancel' ? deps.service.cancel(job.id, actor) : deps.service.retry(job.id, actor));
      changed.push(job.id);
    } catch (error) {
      if (!(error instanceof ManagerError) || error.code === 'unavailable') throw error;
      refused.push({ uuid: job.id, message: error.message });
    }
  }
  const body: z.infer<typeof BatchDocument> = { matched: page.jobs.length, changed, refused };
  if (page.cursor) body.cursor = page.cursor;
  return json(200, body);
}

async function countMatches(deps: ApiDeps, query: JobQuery, from: string | undefined) {
  let matched = 0;
  let cursor = from;
  do {
    const page = await deps.service.queryJobs({ ...query, limit: 1000, cursor });
    matched += page.jobs.length;
    cursor = page.cursor;
  } while (cursor && matched < MAX_DRY_RUN_COUNT);
  return cursor ? { matched, more: true } : { matched };
}

const answers = {
  200: { description: 'What was done, and the cursor to go on with.', schema: BatchDocument },
  400: refusal('A filter that is not valid, or a cursor that is not one of this search.'),
};

export const jobBatchRoutes = [
  route({
    method: 'POST',
    path: '/api/jobs/cancel',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: `Cancel the jobs a search finds (the filters of GET /api/jobs), at most ${MAX_BATCH} per call`,
    query: batchQuery,
    responses: answers,
    handle: (request, deps) => batch('cancel', request, deps),
  }),
  route({
    method: 'POST',
    path: '/api/jobs/retry',
    auth: true,
    role: 'run',
    namespaced: true,
    summary: `Retry the failed, cancelled or aborted jobs a search finds, at most ${MAX_BATCH} per call`,
    query: batchQuery,
    responses: answers,
    handle: (request, deps) => batch('retry', request, deps),
  }),
];
