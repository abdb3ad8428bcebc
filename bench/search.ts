import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Commit, type JobQuery, type JobRecord, PersistentList } from '../engine/index.js';
import { SqliteStore } from '../functions/adapters/sqlite/store.js';

/*
 * Search on the server (GET /api/jobs) over a large SQLite store: N top-level jobs written as serve
 * would (one commit each, in batches), then each search asked for its first page of 25 again and
 * again, warm. `npm run bench:search` (BENCH_SEARCH_JOBS=100000, BENCH_SEARCH_REPEATS=50). The
 * figures go to stdout; BENCHMARKS.md ("Search") quotes a run. Never part of `npm test`
 * (test/bench/search.test.ts runs it on a toy size).
 */

export interface SearchFigures {
  jobs: number;
  /** The database file after loading, in MB. */
  fileMb: number;
  loadSeconds: number;
  /** Per search: its first (cold) page, the median and 95th percentile of the next, in ms, and the jobs it found. */
  searches: { name: string; firstMs: number; medianMs: number; p95Ms: number; found: number }[];
}

/** Prime, so that every customer has jobs of every kind (n % 100). */
const CUSTOMERS = 997;
const WORKFLOWS = ['order', 'refund', 'invoice', 'team-a/order'];
const T0 = Date.UTC(2026, 10, 1);

/** Job n of the load: mostly completed; 1 in 10 waiting for someone, 1 in 20 failed, 1 in 50 running. */
function jobOf(n: number): JobRecord {
  const id = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const createdAt = T0 + n * 1_000;
  const kind = n % 100;
  const status = kind < 10 ? 'running' : kind < 15 ? 'failed' : kind < 17 ? 'running' : 'completed';
  const finished = status === 'completed' || status === 'failed';
  const job: JobRecord = {
    id,
    workflow: WORKFLOWS[n % WORKFLOWS.length] as string,
    version: 1,
    task: null,
    parent: null,
    root: id,
    vhost: null,
    status,
    input: { customer: `c-${n % CUSTOMERS}`, amount: n % 500, lines: [n, n + 1] },
    attributes: { customer: `c-${n % CUSTOMERS}`, region: n % 3 ? 'eu' : 'us' },
    createdAt,
    updatedAt: createdAt + 500,
    rev: 3,
    seq: finished ? 2 : 1,
    steps: PersistentList.of([
      {
        name: 'check',
        status: 'completed',
        attempts: 1,
        firstAttempt: 1,
        startedAt: createdAt,
        endedAt: createdAt + 100,
      },
      {
        name: 'approval',
        status: kind < 10 ? 'running' : finished ? (status === 'failed' ? 'failed' : 'completed') : 'running',
        attempts: 1,
        firstAttempt: 1,
        startedAt: createdAt + 100,
      },
    ]),
  };
  if (kind < 10) job.waitsForSomeone = true;
  if (finished) job.endedAt = createdAt + 500;
  if (status === 'failed')
    job.error = {
      step: 'approval',
      attempt: 1,
      message: n % 2 ? `timeout after 30s waiting for ${job.attributes?.customer}` : 'card declined',
      at: createdAt + 500,
    };
  return job;
}

function creating(job: JobRecord): Commit {
  return {
    job,
    expectedRev: 0,
    patch: { fields: {}, steps: {} },
    creates: [],
    outbox: [],
    timers: [],
    fanInits: [],
    dropUnsent: false,
  };
}

export async function benchSearch(jobs: number, repeats: number): Promise<SearchFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-search-'));
  const path = join(dir, 'search.db');
  const store = SqliteStore.open(path);
  try {
    const loadStart = performance.now();
    for (let from = 0; from < jobs; from += 1_000) {
      const batch: Commit[] = [];
      for (let n = from; n < Math.min(jobs, from + 1_000); n++) batch.push(creating(jobOf(n)));
      await store.commit(batch);
    }
    const loadSeconds = (performance.now() - loadStart) / 1_000;
    const middle = T0 + Math.floor(jobs / 2) * 1_000;
    const searches: [string, JobQuery][] = [
      ['waiting, customer = c-42', { status: 'waiting', attributes: { customer: 'c-42' } }],
      ['customer = c-42 (any status)', { attributes: { customer: 'c-42' } }],
      ['customer = c-42 and region = eu', { attributes: { customer: 'c-42', region: 'eu' } }],
      ['waiting (any customer)', { status: 'waiting' }],
      ['failed, error holds "timeout"', { status: 'failed', errorContains: 'timeout' }],
      ['completed, created in the second half', { status: 'completed', createdAfter: middle }],
      [
        'order, waiting, customer = c-42',
        { workflow: 'order', status: 'waiting', attributes: { customer: 'c-42' } },
      ],
      ['namespace team-a, failed', { namespace: 'team-a', status: 'failed' }],
    ];
    const figures: SearchFigures['searches'] = [];
    for (const [name, query] of searches) {
      const times: number[] = [];
      let found = 0;
      for (let run = 0; run <= repeats; run++) {
        const start = performance.now();
        const page = await store.queryJobs({ ...query, limit: 25 });
        times.push(performance.now() - start);
        found = page.jobs.length;
      }
      const first = times.shift() ?? 0;
      times.sort((a, b) => a - b);
      figures.push({
        name,
        firstMs: round(first),
        medianMs: round(times[Math.floor(times.length / 2)] ?? 0),
        p95Ms: round(times[Math.min(times.length - 1, Math.floor(times.length * 0.95))] ?? 0),
        found,
      });
    }
    const fileMb = round((await stat(path)).size / 1_048_576);
    return { jobs, fileMb, loadSeconds: round(loadSeconds), searches: figures };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (value: number) => Math.round(value * 100) / 100;

if (import.meta.url === `file://${process.argv[1]}`) {
  const jobs = Number(process.env.BENCH_SEARCH_JOBS ?? 100_000);
  const repeats = Number(process.env.BENCH_SEARCH_REPEATS ?? 50);
  const figures = await benchSearch(jobs, repeats);
  process.stdout.write(
    `${jobs.toLocaleString('en')} top-level jobs in SQLite (${figures.fileMb} MB, loaded in ${figures.loadSeconds} s); first page of 25: the first time, then ${repeats} more:\n\n` +
      '| search | first | median | p95 | found |\n| --- | --- | --- | --- | --- |\n' +
      figures.searches
        .map((s) => `| ${s.name} | ${s.firstMs} ms | ${s.medianMs} ms | ${s.p95Ms} ms | ${s.found} |`)
        .join('\n') +
      '\n',
  );
}
