import { randomBytes } from 'node:crypto';
import {
  type AttributeValue,
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Commit,
  type JobRecord,
  type OutboxEntry,
  PersistentList,
  type StepRequest,
  type StepState,
} from '../../../../engine/index.js';
import { leaveInlineIndex } from '../../../../functions/adapters/dynamodb/inline-outbox.js';
import { DynamoDbStore } from '../../../../functions/adapters/dynamodb/store.js';
import { DynamoDbTable } from '../../../../functions/adapters/dynamodb/table.js';
import { treeLevels } from '../../../../functions/adapters/dynamodb/tree-walk.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../../support/dynamodb-local.js';
import {
  aChild,
  aJob,
  aRequest,
  aWorkflow,
  creating,
  type JobOverrides,
  requestEntry,
  updating,
} from '../../../support/factories.js';
import { deliveryArbitrary, runJob, shapeArbitrary } from '../../../support/random-workflows.js';
import { SimulatedWorld } from '../../../support/simulated-world.js';
import { describeStoreContract } from '../../store-contract.js';

const TIMEOUT = 180_000;

let dynamo: DynamoDbLocal | undefined;
let starting: Promise<DynamoDbLocal> | undefined;

/** One DynamoDB Local for the file, a fresh table for each store. */
async function emulator(): Promise<DynamoDbLocal> {
  starting ??= startDynamoDbLocal();
  dynamo = await starting;
  return dynamo;
}

async function freshStore(
  options: { counterShards?: (total: number) => number } = {},
): Promise<{ store: DynamoDbStore; tableName: string }> {
  const local = await emulator();
  const tableName = uniqueTableName('dynamodb-store');
  await createSwitchyardTable(local.client, tableName);
  return { store: new DynamoDbStore({ client: local.client, tableName, ...options }), tableName };
}

afterAll(async () => {
  await dynamo?.stop();
});

describeStoreContract(
  'dynamodb (DynamoDB Local)',
  async () => {
    const { store, tableName } = await freshStore();
    const local = await emulator();
    // Other Lambda instances: stores of their own (their own caches) on the same table.
    const others: DynamoDbStore[] = [];
    const another = async () => {
      const other = new DynamoDbStore({ client: local.client, tableName });
      others.push(other);
      return other;
    };
    return {
      store,
      another,
      deliveryExpiry: async (id: string) => {
        const item = await local.client.send(
          new GetItemCommand({ TableName: tableName, Key: { pk: { S: `DLV#${id}` }, sk: { S: 'D' } } }),
        );
        const expiresAt = item.Item?.expiresAt?.N;
        return expiresAt === undefined ? undefined : Number(expiresAt);
      },
      cleanup: async () => {
        for (const other of others) await other.close();
        await store.close();
      },
    };
  },
  { timeout: TIMEOUT },
);

/** A child of `parentId`'s fan-out step `fan` completing: its count, and the follow-up only the last one needs. */
function finishingChild(parentId: string, child: JobRecord): Commit {
  const rev = child.rev + 1;
  const outcome = { parentId, step: 'fan', index: child.parent?.index ?? 0, status: 'completed' as const };
  return updating(
    child,
    { ...child, rev, status: 'completed' },
    {
      childOutcome: outcome,
      outbox: [
        {
          id: `${child.id}:${rev}:f0`,
          kind: 'followUp',
          jobId: child.id,
          createdAt: 5_000,
          followUp: { kind: 'childFinished', ...outcome, onlyIfLast: true },
        },
      ],
    },
  );
}

async function rawItem(
  tableName: string,
  pk: string,
  sk: string,
): Promise<Record<string, AttributeValue> | undefined> {
  const local = await emulator();
  const { Item } = await local.client.send(
    new GetItemCommand({ TableName: tableName, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
  );
  return Item;
}

/** Every item of the table with its size as DynamoDB counts it (names plus values, roughly). */
async function itemSizes(tableName: string): Promise<{ key: string; bytes: number }[]> {
  const local = await emulator();
  const sizes: { key: string; bytes: number }[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await local.client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) {
      let bytes = 0;
      for (const [name, value] of Object.entries(item)) {
        bytes += Buffer.byteLength(name);
        if (value.S !== undefined) bytes += Buffer.byteLength(value.S);
        else if (value.B !== undefined) bytes += value.B.length;
        else if (value.N !== undefined) bytes += value.N.length;
        else bytes += Buffer.byteLength(JSON.stringify(value));
      }
      sizes.push({ key: `${item.pk?.S}/${item.sk?.S}`, bytes });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return sizes;
}

/** The job's next round: step a answered, step b's first attempt running and requested. */
const nextRound = (job: JobRecord, at: number) => {
  const next: JobRecord = {
    ...job,
    rev: job.rev + 1,
    updatedAt: at,
    steps: PersistentList.of([
      { name: 'a', status: 'completed', attempts: 1, firstAttempt: 1, startedAt: 1_000, endedAt: at },
      { name: 'b', status: 'running', attempts: 1, firstAttempt: 1, startedAt: at },
    ]),
  };
  const request: OutboxEntry = {
    id: `${job.id}:${next.rev}:r0`,
    kind: 'request',
    jobId: job.id,
    createdAt: at,
    request: aRequest(next, 'b'),
  };
  return { next, request };
};

const followUpOf = (job: JobRecord, createdAt: number): OutboxEntry => ({
  id: `${job.id}:1:f0`,
  kind: 'followUp',
  jobId: job.id,
  createdAt,
  followUp: { kind: 'cancelChildren', jobId: job.id, step: 'a' },
});

describe('A manager on a DynamoDbStore', { timeout: TIMEOUT }, () => {
  it('runs random workflows with fan-outs and reordered, duplicated replies to the same end as on the memory store', async () => {
    await fc.assert(
      fc.asyncProperty(shapeArbitrary, deliveryArbitrary, async (shape, delivery) => {
        const reference = await runJob(shape, null);
        const { store } = await freshStore();
        const shuffled = await runJob(shape, delivery, store);
        expect(shuffled.job.status).toBe('completed');
        expect(shuffled.job.result).toEqual(reference.job.result);
        for (const [key, count] of shuffled.counts) expect(count, key).toBe(1);
        for (const [correlationId, count] of shuffled.dispatches) expect(count, correlationId).toBe(1);
      }),
      { numRuns: 8 },
    );
  });
});

describe('Managers on two DynamoDbStores sharing one table (two Lambda instances)', {
  timeout: TIMEOUT,
}, () => {
  it.each([
    { children: 250, concurrency: 'all' },
    { children: 150, concurrency: 20 },
  ])(
    'run a fan-out of $children children (in flight: $concurrency) to the end with every reply delivered twice, to both at once',
    async ({ children, concurrency }) => {
      // Prepare
      const { store: first, tableName } = await freshStore();
      const local = await emulator();
      const second = new DynamoDbStore({ client: local.newClient(), tableName });
      const a = new SimulatedWorld(first);
      const b = new SimulatedWorld(second);
      await a.register(`
workflows:
  - name: fan
    steps:
      - name: split
      - name: each
        task: per-item
        depends: [ split ]
      - name: sum
        depends: [ each ]
    tasks:
      - name: per-item
        itemListKey: items
        ${typeof concurrency === 'number' ? `concurrency: ${concurrency}` : ''}
        steps:
          - name: work
`);
      const id = await a.start('fan', {});
      const [split] = a.take();
      const items = Array.from({ length: children }, (_, n) => n);

      // Act
      await a.reply(split as StepRequest, { items });
      const dispatched = new Map<string, number>();
      const sums: StepRequest[] = [];
      const pool: StepRequest[] = [];
      const collect = (): void => {
        for (const request of [...a.take(), ...b.take()]) {
          dispatched.set(request.correlationId, (dispatched.get(request.correlationId) ?? 0) + 1);
          if (request.step === 'sum') sums.push(request);
          else pool.push(request);
        }
      };
      collect();
      while (pool.length) {
        const replies = pool.splice(0, 10).map((request) => ({
          correlationId: request.correlationId,
          body: JSON.stringify({ item: (request.body.item as number) * 2 }),
        }));
        await Promise.all([a.deliver(replies), b.deliver([...replies].reverse())]);
        collect();
      }
      expect(sums).toHaveLength(1);
      await b.reply(sums[0] as StepRequest, { total: 1 });

      // Assess
      expect(dispatched.size).toBe(children + 1);
      expect([...dispatched.values()].every((count) => count === 1)).toBe(true);
      const job = await a.job(id);
      expect(job.status).toBe('completed');
      expect(job.steps.find((step) => step.name === 'each')?.output?.items).toEqual(items.map((n) => n * 2));
      expect(await first.countJobs('fan')).toEqual({
        pending: 0,
        waiting: 0,
        running: 0,
        paused: 0,
        scheduled: 0,
        queued: 0,
        completed: 1,
        failed: 0,
        cancelled: 0,
        aborted: 0,
      });
      expect(await second.getFanCounts(id, 'each')).toEqual({ total: children, done: children, failed: 0 });
      expect((await first.pendingOutbox({ limit: 10_000 })).entries).toEqual([]);
    },
  );
});

describe('DynamoDbStore on DynamoDB Local', { timeout: TIMEOUT }, () => {
  let store: DynamoDbStore;
  let tableName: string;
  beforeAll(async () => {
    ({ store, tableName } = await freshStore());
  });

  it('round-trips a job record far above 400 KB, and no stored item exceeds 400 KB', async () => {
    // Prepare: random text does not compress, so the record must be cut into chunks.
    const noise = randomBytes(600_000).toString('base64');
    const job = aJob({
      result: { noise },
      steps: [{ name: 'a', status: 'completed', attempts: 1, firstAttempt: 1, output: { noise } }],
    });

    // Act
    await store.commit([creating(job)]);
    const next: JobRecord = { ...job, rev: 2, updatedAt: 2_000, result: { noise: noise.slice(1) } };
    expect(await store.commit([updating(job, next)])).toEqual([{ ok: true }]);

    // Assess
    expect(await store.getJob(job.id)).toEqual(next);
    expect((await store.getJobs([job.id])).get(job.id)).toEqual(next);
    const sizes = await itemSizes(tableName);
    const mine = sizes.filter((item) => item.key.startsWith(`JOB#${job.id}/`));
    expect(mine.length).toBeGreaterThan(2);
    expect(Math.max(...sizes.map((item) => item.bytes))).toBeLessThan(400_000);
    // The first revision's chunks were deleted when the second replaced them: one set is left.
    const tokens = new Set(
      mine.filter((item) => item.key.includes('/C#')).map((item) => item.key.split('#')[2]),
    );
    expect(tokens.size).toBe(1);
  });

  it('commits a fan-out of 10,000 children with their requests, and lists them back in order', async () => {
    // Prepare
    const parent = aJob();
    const total = 10_000;
    const children = Array.from({ length: total }, (_, index) =>
      aChild(parent, 'fan', index, { status: 'running' }),
    );
    const outbox = children.map((child, n) => ({
      id: `${parent.id}:2:r${n}`,
      kind: 'request' as const,
      jobId: child.id,
      createdAt: 2_000,
      request: aRequest(child),
    }));
    await store.commit([creating(parent)]);
    const next = { ...parent, rev: 2 };
    const commit: Commit = updating(parent, next, {
      creates: children,
      outbox,
      fanInits: [{ parentId: parent.id, step: 'fan', total, done: 0, failed: 0 }],
    });

    // Act
    const started = Date.now();
    const [result] = await store.commit([commit]);
    const elapsed = Date.now() - started;
    console.info(`fan-out of ${total} children committed in ${elapsed} ms`);

    // Assess
    expect(result).toEqual({ ok: true });
    const listed: JobRecord[] = [];
    let fromIndex: number | undefined = 0;
    while (fromIndex !== undefined) {
      const page = await store.listChildren(parent.id, 'fan', { fromIndex, limit: 1_000 });
      listed.push(...page.children);
      fromIndex = page.nextIndex;
    }
    expect(listed.map((child) => child.parent?.index)).toEqual(children.map((_, index) => index));
    expect(listed[4_321]).toEqual(children[4_321]);
    expect(await store.getJob(children[9_999]?.id as string)).toEqual(children[9_999]);
    expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total, done: 0, failed: 0 });
    let pending = 0;
    let cursor: string | undefined;
    do {
      const page = await store.pendingOutbox({ limit: 5_000, cursor });
      pending += page.entries.filter((entry) => entry.id.startsWith(`${parent.id}:2:`)).length;
      cursor = page.cursor;
    } while (cursor);
    expect(pending).toBe(total);
  });

  it('a big commit that loses its race leaves nothing visible', async () => {
    // Prepare: two rivals from the same revision, each creating 150 children (more than a transaction holds).
    const parent = aJob();
    await store.commit([creating(parent)]);
    const rival = (tag: string): Commit => {
      const children = Array.from({ length: 150 }, (_, index) => aChild(parent, tag, index));
      return updating(
        parent,
        { ...parent, rev: 2, input: { tag } },
        {
          creates: children,
          outbox: children.map((child, n) => ({
            id: `${parent.id}:2:r${n}`,
            kind: 'request' as const,
            jobId: child.id,
            createdAt: 3_000,
            request: aRequest(child),
          })),
        },
      );
    };
    const a = rival('a');
    const b = rival('b');

    // Act
    const results = (await Promise.all([store.commit([a]), store.commit([b])])).flat();

    // Assess
    expect(results.filter((result) => result.ok)).toHaveLength(1);
    const winner = results[0]?.ok ? a : b;
    const loser = winner === a ? b : a;
    const winnerStep = winner.job.input.tag as string;
    const loserStep = loser.job.input.tag as string;
    expect((await store.getJob(parent.id))?.input).toEqual({ tag: winnerStep });
    expect((await store.listChildren(parent.id, winnerStep, { limit: 1_000 })).children).toHaveLength(150);
    expect((await store.listChildren(parent.id, loserStep, { limit: 1_000 })).children).toEqual([]);
    expect(await store.getJob(loser.creates[0]?.id as string)).toBeUndefined();
    const entries = (await store.pendingOutbox({ limit: 100_000 })).entries.filter((entry) =>
      entry.id.startsWith(`${parent.id}:`),
    );
    expect(entries).toHaveLength(150);
    expect(new Set(entries.map((entry) => entry.jobId))).toEqual(
      new Set(winner.creates.map((child) => child.id)),
    );
    // The loser took its writes back; a winner's child is pending until its own first commit.
    expect(await rawItem(tableName, `JOB#${loser.creates[0]?.id}`, 'J')).toBeUndefined();
    const firstChild = winner.creates[0] as JobRecord;
    expect((await rawItem(tableName, `JOB#${firstChild.id}`, 'J'))?.pv?.L).toHaveLength(1);
    await store.commit([updating(firstChild, { ...firstChild, rev: 2, status: 'running' })]);
    const committed = await rawItem(tableName, `JOB#${firstChild.id}`, 'J');
    expect(committed?.pv).toBeUndefined();
    expect(committed?.po).toBeUndefined();
    expect(await store.getJob(firstChild.id)).toEqual({ ...firstChild, rev: 2, status: 'running' });
  });

  it('lets exactly one of many concurrent commits racing on one job win, again and again', async () => {
    // Prepare
    let job = aJob();
    await store.commit([creating(job)]);

    for (let round = 0; round < 5; round++) {
      // Act
      const base = job;
      const attempts = Array.from({ length: 10 }, (_, n) =>
        store.commit([
          updating(
            base,
            { ...base, rev: base.rev + 1, input: { round, writer: n } },
            {
              outbox: [
                {
                  id: `${base.id}:${round}:${n}`,
                  kind: 'request',
                  jobId: base.id,
                  createdAt: 5,
                  request: aRequest(base),
                },
              ],
            },
          ),
        ]),
      );
      const results = (await Promise.all(attempts)).flat();

      // Assess
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      job = (await store.getJob(job.id)) as JobRecord;
      expect(job.rev).toBe(base.rev + 1);
      const winner = results.findIndex((result) => result.ok);
      expect(job.input).toEqual({ round, writer: winner });
      const entries = (await store.pendingOutbox({ limit: 100_000 })).entries.filter((entry) =>
        entry.id.startsWith(`${job.id}:${round}:`),
      );
      expect(entries.map((entry) => entry.id)).toEqual([`${job.id}:${round}:${winner}`]);
    }
  });

  it('counts 1,000 children finished by 20 concurrent committers exactly once each', async () => {
    // Prepare
    const { store: sharded } = await freshStore({ counterShards: (total) => Math.ceil(total / 100) });
    const parent = aJob();
    const total = 1_000;
    const children = Array.from({ length: total }, (_, index) => aChild(parent, 'fan', index));
    await sharded.commit([
      creating(parent, {
        creates: children,
        fanInits: [{ parentId: parent.id, step: 'fan', total, done: 0, failed: 0 }],
      }),
    ]);
    const finishing = children.map((child) => {
      const index = child.parent?.index ?? 0;
      const status = index % 10 === 0 ? ('failed' as const) : ('completed' as const);
      return updating(
        child,
        { ...child, rev: 2, status, result: { n: index } },
        { childOutcome: { parentId: parent.id, step: 'fan', index, status } },
      );
    });

    // Act: 20 committers, each with its own share, in batches of 10 (a reply batch).
    const started = Date.now();
    const results = (
      await Promise.all(
        Array.from({ length: 20 }, async (_, committer) => {
          const mine = finishing.filter((_, n) => n % 20 === committer);
          const out = [];
          for (let start = 0; start < mine.length; start += 10)
            out.push(...(await sharded.commit(mine.slice(start, start + 10))));
          return out;
        }),
      )
    ).flat();
    console.info(`1,000 child outcomes by 20 committers in ${Date.now() - started} ms`);

    // Assess
    expect(results.every((result) => result.ok)).toBe(true);
    expect(await sharded.getFanCounts(parent.id, 'fan')).toEqual({ total, done: 900, failed: 100 });
    expect(
      results.some(
        (result) =>
          result.ok && result.fanCounts && result.fanCounts.done + result.fanCounts.failed === total,
      ),
    ).toBe(true);
    // A repeated final write loses on its revision and counts nothing.
    expect(await sharded.commit([finishing[1] as Commit])).toEqual([{ ok: false, conflict: true }]);
    expect(await sharded.getFanCounts(parent.id, 'fan')).toEqual({ total, done: 900, failed: 100 });
  });

  it('deletes a finished job with its whole tree: children, their index, counters, chunks and unsent entries', async () => {
    // Prepare
    const workflow = `tree-${randomBytes(4).toString('hex')}`;
    const root = aJob({ workflow });
    const children = Array.from({ length: 150 }, (_, index) => aChild(root, 'fan', index, { workflow }));
    const outbox = children.map((child, n) => ({
      id: `${root.id}:1:r${n}`,
      kind: 'request' as const,
      jobId: child.id,
      createdAt: 1_000,
      request: aRequest(child),
    }));
    await store.commit([
      creating(root, {
        creates: children,
        outbox,
        fanInits: [{ parentId: root.id, step: 'fan', total: 150, done: 0, failed: 0 }],
      }),
    ]);
    const noise = randomBytes(400_000).toString('base64');
    const done = { ...root, rev: 2, status: 'completed' as const, endedAt: 2_000, result: { noise } };
    await store.commit([updating(root, done)]);
    expect(await store.countJobs(workflow)).toMatchObject({ completed: 1 });

    // Act
    const deleted = await store.deleteFinishedJobs(3_000);

    // Assess
    expect(deleted).toBe(151);
    const ids = [root.id, ...children.map((child) => child.id)];
    const left = (await itemSizes(tableName)).filter((item) => ids.some((id) => item.key.includes(id)));
    expect(left).toEqual([]);
    expect(await store.countJobs(workflow)).toMatchObject({ completed: 0 });
    expect(await store.deleteFinishedJobs(3_000)).toBe(0);
  });

  it('marks finished jobs for expiry (TTL) when a retention is set, and unmarks a job that runs again', async () => {
    // Prepare
    const local = await emulator();
    const retained = new DynamoDbStore({ client: local.client, tableName, retentionSeconds: 86_400 });
    const job = aJob();
    const failed = { ...job, rev: 2, status: 'failed' as const, endedAt: 1_700_000_000_500 };
    const again = { ...failed, rev: 3, status: 'running' as const, endedAt: undefined };

    // Act
    await retained.commit([creating(job)]);
    const whileRunning = await rawItem(tableName, `JOB#${job.id}`, 'J');
    await retained.commit([updating(job, failed)]);
    const whenFailed = await rawItem(tableName, `JOB#${job.id}`, 'J');
    await retained.commit([updating(failed, again)]);
    const whenRetried = await rawItem(tableName, `JOB#${job.id}`, 'J');

    // Assess
    expect(whileRunning?.expiresAt).toBeUndefined();
    expect(whenFailed?.expiresAt).toEqual({ N: String(1_700_000_001 + 86_400) });
    expect(whenRetried?.expiresAt).toBeUndefined();
  });

  it("keeps a job's own requests and follow-ups in its head until sent, where a restarted store recovers them", async () => {
    // Prepare
    const job = aJob();
    const entries: OutboxEntry[] = [
      requestEntry(job, `${job.id}:1:r0`, 5),
      { ...requestEntry(job, `${job.id}:1:r1`, 5), request: aRequest(job, 'b') } as OutboxEntry,
      {
        id: `${job.id}:1:f0`,
        kind: 'followUp',
        jobId: job.id,
        createdAt: 5,
        followUp: { kind: 'cancelChildren', jobId: job.id, step: 'a' },
      },
    ];
    const mine = async (from: DynamoDbStore) =>
      (await from.pendingOutbox({ limit: 100_000 })).entries.filter((entry) => entry.jobId === job.id);

    // Act
    await store.commit([creating(job, { outbox: entries })]);
    await store.commit([updating(job, { ...job, rev: 2 })]);
    const restarted = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const recovered = await mine(restarted);
    await restarted.ackOutbox([entries[0]?.id as string]);
    const afterOne = await mine(store);
    await store.ackOutbox([entries[1]?.id as string, entries[2]?.id as string]);

    // Assess
    for (const entry of entries) expect(await rawItem(tableName, `OUT#${entry.id}`, 'O')).toBeUndefined();
    expect(recovered).toEqual(entries);
    expect(afterOne).toEqual(entries.slice(1));
    expect(await mine(store)).toEqual([]);
    const head = await rawItem(tableName, `JOB#${job.id}`, 'J');
    expect(Object.keys(head ?? {}).filter((name) => /^(oi|o_|gsi3)/.test(name))).toEqual([]);
    expect(await store.getJob(job.id)).toEqual({ ...job, rev: 2 });
  });

  it("keeps every field of a job's own request in its head, its deadline too, for a restarted store to recover", async () => {
    // Prepare: requests small enough to be kept inline, with every field set.
    const job = aJob({ vhost: 'orders' });
    const timed: OutboxEntry = {
      id: `${job.id}:1:r0`,
      kind: 'request',
      jobId: job.id,
      createdAt: 7,
      request: { ...aRequest(job), vhost: 'orders', deadline: 30_007 },
    };
    const renamed: OutboxEntry = {
      id: `${job.id}:1:r1`,
      kind: 'request',
      jobId: job.id,
      createdAt: 7,
      request: { ...aRequest(job, 'b', 2), correlationId: `${job.id}:other`, deadline: 60_007 },
    };

    // Act
    await store.commit([creating(job, { outbox: [timed, renamed] })]);
    const restarted = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const recovered = (await restarted.pendingOutbox({ limit: 100_000 })).entries.filter(
      (entry) => entry.jobId === job.id,
    );

    // Assess
    expect(await rawItem(tableName, `OUT#${timed.id}`, 'O')).toBeUndefined();
    expect(recovered).toEqual([timed, renamed]);
  });

  it('keeps a head in gsi3 between its rounds of requests, under the key of its first, and recovers a later round by its own time, in order, in pages', async () => {
    // Prepare
    const { store, tableName } = await freshStore();
    const job = aJob();
    const first = requestEntry(job, `${job.id}:1:r0`, 5);
    const { next: second, request: later } = nextRound(job, 100);
    const other = aJob();
    // Too large to stay in its head: an outbox item, recovered between the two rounds.
    const between: OutboxEntry = {
      id: `${other.id}:1:r0`,
      kind: 'request',
      jobId: other.id,
      createdAt: 50,
      request: { ...aRequest(other), body: { pad: 'x'.repeat(3_000) } },
    };
    const recover = async (createdBefore: number) => {
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.pendingOutbox({ limit: 1, cursor, createdBefore });
        ids.push(...page.entries.map((entry) => entry.id));
        cursor = page.cursor;
      } while (cursor);
      return ids;
    };

    // Act
    await store.commit([creating(job, { outbox: [first] }), creating(other, { outbox: [between] })]);
    await store.ackOutbox([first.id]);
    const afterAck = await rawItem(tableName, `JOB#${job.id}`, 'J');
    await store.commit([updating(job, second, { outbox: [later] })]);
    const afterSecond = await rawItem(tableName, `JOB#${job.id}`, 'J');
    const early = await recover(80);
    const all = await recover(1_000);

    // Assess
    expect(afterAck?.gsi3sk?.S).toMatch(/^000000000000005#/);
    expect(afterSecond?.gsi3sk).toEqual(afterAck?.gsi3sk);
    // The first request, answered, left the head with the commit that recorded its answer.
    expect(afterSecond?.oi).toEqual({ SS: ['r~2:r0'] });
    expect(early).toEqual([between.id]);
    expect(all).toEqual([between.id, later.id]);
  });

  it('takes a head out of gsi3 when its job ends holding nothing, or when recovery finds it holding nothing unsent, never while it holds an entry', async () => {
    // Prepare
    const { store, tableName } = await freshStore();
    const [ended, idle, unsent] = [aJob(), aJob(), aJob()] as [JobRecord, JobRecord, JobRecord];
    const request = (job: JobRecord) => requestEntry(job, `${job.id}:1:r0`, 5);
    const end = (job: JobRecord) => updating(job, { ...job, rev: 2, status: 'completed', endedAt: 10 });
    const indexed = async (job: JobRecord) =>
      (await rawItem(tableName, `JOB#${job.id}`, 'J'))?.gsi3sk !== undefined;
    const state = async () => ({
      ended: await indexed(ended),
      idle: await indexed(idle),
      unsent: await indexed(unsent),
    });
    await store.commit([
      creating(ended, { outbox: [request(ended)] }),
      creating(idle, { outbox: [request(idle)] }),
      creating(unsent, { outbox: [followUpOf(unsent, 5)] }),
    ]);
    await store.ackOutbox([request(ended).id, request(idle).id]);

    // Act
    await store.commit([end(ended), end(unsent)]);
    const afterEnd = await state();
    const recovered = await store.pendingOutbox({ limit: 100, createdBefore: 1_000 });
    const afterRecovery = await state();
    await store.ackOutbox([followUpOf(unsent, 5).id]);
    await store.pendingOutbox({ limit: 100, createdBefore: 1_000 });

    // Assess
    expect(afterEnd).toEqual({ ended: false, idle: true, unsent: true });
    expect(recovered.entries).toEqual([followUpOf(unsent, 5)]);
    expect(afterRecovery).toEqual({ ended: false, idle: false, unsent: true });
    expect(await state()).toEqual({ ended: false, idle: false, unsent: false });
    const idleHead = await rawItem(tableName, `JOB#${idle.id}`, 'J');
    expect(Object.keys(idleHead ?? {}).filter((name) => /^(oi|o_|gsi3)/.test(name))).toEqual([]);
  });

  it('takes a head out of gsi3 whose `oi` names only an entry no longer held', async () => {
    // Prepare: a commit that did not know another process had removed the entry named it again.
    const local = await emulator();
    const { store, tableName } = await freshStore();
    const job = aJob();
    const first = requestEntry(job, `${job.id}:1:r0`, 5);
    await store.commit([creating(job, { outbox: [first] })]);
    await local.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: `JOB#${job.id}` }, sk: { S: 'J' } },
        UpdateExpression: 'REMOVE #o',
        ExpressionAttributeNames: { '#o': 'o_r~1:r0' },
      }),
    );

    // Act
    const recovered = await store.pendingOutbox({ limit: 100, createdBefore: 1_000 });

    // Assess
    expect(recovered.entries).toEqual([]);
    const head = await rawItem(tableName, `JOB#${job.id}`, 'J');
    expect(Object.keys(head ?? {}).filter((name) => /^(oi|o_|gsi3)/.test(name))).toEqual([]);
  });

  it('leaves a head in gsi3 when a commit gave it entries after recovery found it holding none', async () => {
    // Prepare
    const local = await emulator();
    const { store, tableName } = await freshStore();
    const job = aJob();
    const first = requestEntry(job, `${job.id}:1:r0`, 5);
    const { next: third, request: next } = nextRound({ ...job, rev: 2 }, 7);
    // Step a answered, step b not started yet: the head holds nothing, and stays in gsi3.
    const second = { ...third, rev: 2, steps: third.steps.with(1, job.steps.get(1) as StepState) };
    await store.commit([creating(job, { outbox: [first] })]);
    await store.ackOutbox([first.id]);
    await store.commit([updating(job, second)]);
    const found = (await rawItem(tableName, `JOB#${job.id}`, 'J')) ?? {};

    // Act
    await store.commit([updating(second, third, { outbox: [next] })]);
    await leaveInlineIndex(new DynamoDbTable(local.client, tableName), found);

    // Assess
    expect(found.oi).toBeUndefined();
    expect(found.gsi3sk).toBeDefined();
    expect((await rawItem(tableName, `JOB#${job.id}`, 'J'))?.gsi3sk).toEqual(found.gsi3sk);
    const pending = await store.pendingOutbox({ limit: 100, createdBefore: 1_000 });
    expect(pending.entries).toEqual([next]);
  });

  it('marks the requests of one call sent in one log item, which recovery reads to leave them out and clear them from their heads', async () => {
    // Prepare
    const local = await emulator();
    const { tableName } = await freshStore();
    const client = local.newClient();
    const commands: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        commands.push(context.commandName ?? '');
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    const store = new DynamoDbStore({ client, tableName });
    const jobs = [aJob(), aJob(), aJob()];
    const requests = jobs.map((job) => requestEntry(job, `${job.id}:1:r0`, 5));
    await store.commit(jobs.map((job, n) => creating(job, { outbox: [requests[n] as OutboxEntry] })));
    commands.length = 0;

    // Act
    await store.ackOutbox(requests.map((request) => request.id));
    const acknowledging = [...commands];
    const heldAfterAck = await rawItem(tableName, `JOB#${jobs[0]?.id}`, 'J');
    const restarted = new DynamoDbStore({ client: local.client, tableName });
    const recovered = await restarted.pendingOutbox({ limit: 100, createdBefore: 70_000 });

    // Assess
    expect(acknowledging).toEqual(['BatchWriteItemCommand']);
    expect(heldAfterAck?.oi).toEqual({ SS: ['r~1:r0'] });
    const { Items: logged = [] } = await local.client.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :log)',
        ExpressionAttributeValues: { ':log': { S: 'SNT#0#' } },
      }),
    );
    expect(logged.map((item) => item.ids?.SS?.sort())).toEqual([
      requests.map((request) => request.id).sort(),
    ]);
    expect(Number(logged[0]?.expiresAt?.N)).toBe(60 + 86_400);
    expect(recovered.entries).toEqual([]);
    for (const job of jobs) {
      const head = await rawItem(tableName, `JOB#${job.id}`, 'J');
      expect(Object.keys(head ?? {}).filter((name) => /^(oi|o_|gsi3)/.test(name))).toEqual([]);
    }
  });

  it("keeps a new round's requests in the head beside those still awaiting replies, up to 3,000 bytes of them", async () => {
    // Prepare
    const { store, tableName } = await freshStore();
    const job = aJob({
      steps: ['a', 'b', 'c'].map((name) => ({
        name,
        status: 'waiting' as const,
        attempts: 0,
        firstAttempt: 1,
      })),
    });
    const running = (of: JobRecord, names: string[], rev: number): JobRecord => ({
      ...of,
      rev,
      steps: PersistentList.of(
        of.steps.map((step) =>
          names.includes(step.name) ? { ...step, status: 'running' as const, attempts: 1 } : step,
        ),
      ),
    });
    const request = (of: JobRecord, step: string, pad: number): OutboxEntry => ({
      id: `${of.id}:${of.rev}:r0`,
      kind: 'request',
      jobId: of.id,
      createdAt: 5,
      request: { ...aRequest(of, step), body: { pad: 'x'.repeat(pad) } },
    });
    const first = running(job, ['a'], 1);
    const second = running(first, ['b'], 2);
    const third = running(second, ['c'], 3);

    // Act
    await store.commit([creating(first, { outbox: [request(first, 'a', 10)] })]);
    await store.ackOutbox([`${job.id}:1:r0`]);
    await store.commit([updating(first, second, { outbox: [request(second, 'b', 1_800)] })]);
    const afterSecond = await rawItem(tableName, `JOB#${job.id}`, 'J');
    await store.commit([updating(second, third, { outbox: [request(third, 'c', 1_800)] })]);

    // Assess
    expect(afterSecond?.oi?.SS?.sort()).toEqual(['r~1:r0', 'r~2:r0']);
    expect(await rawItem(tableName, `OUT#${job.id}:2:r0`, 'O')).toBeUndefined();
    expect(await rawItem(tableName, `OUT#${job.id}:3:r0`, 'O')).toBeDefined();
    expect((await rawItem(tableName, `JOB#${job.id}`, 'J'))?.oi?.SS?.sort()).toEqual(['r~1:r0', 'r~2:r0']);
  });

  it('drops unsent requests of a job that stops, also those its parent created for it', async () => {
    // Prepare
    const parent = aJob();
    const child = aChild(parent, 'fan', 0);
    const created = {
      id: 'created-for-child',
      kind: 'request' as const,
      jobId: child.id,
      createdAt: 7,
      request: aRequest(child),
    };
    await store.commit([creating(parent, { creates: [child], outbox: [created] })]);
    const own = {
      id: 'own-request',
      kind: 'request' as const,
      jobId: child.id,
      createdAt: 8,
      request: aRequest(child, 'b'),
    };
    const running = { ...child, rev: 2 };
    await store.commit([updating(child, running, { outbox: [own] })]);

    // Act
    await store.commit([
      updating(running, { ...running, rev: 3, status: 'cancelled' }, { dropUnsent: true }),
    ]);

    // Assess
    const ids = (await store.pendingOutbox({ limit: 100_000 })).entries.map((entry) => entry.id);
    expect(ids).not.toContain('created-for-child');
    expect(ids).not.toContain('own-request');
  });
});

describe('DynamoDbStore on DynamoDB Local: young top-level jobs outside gsi3', { timeout: TIMEOUT }, () => {
  /** A fresh table and a store that has seen a workflow registered. */
  async function withWorkflow(): Promise<{ store: DynamoDbStore; tableName: string; workflow: string }> {
    const { store, tableName } = await freshStore();
    const workflow = `young-${randomBytes(4).toString('hex')}`;
    await store.saveWorkflow(aWorkflow(workflow), 1);
    return { store, tableName, workflow };
  }

  const inGsi3 = async (tableName: string, job: JobRecord) =>
    (await rawItem(tableName, `JOB#${job.id}`, 'J'))?.gsi3sk?.S;

  it("keeps a young job's requests out of gsi3, and recovers those a crash left unsent through the job listing, then from gsi3", async () => {
    // Prepare
    const { store, tableName, workflow } = await withWorkflow();
    const job = aJob({ workflow, createdAt: 1_000, updatedAt: 1_000 });
    const first = requestEntry(job, `${job.id}:1:r0`, 1_000);
    const second = { ...job, rev: 2, updatedAt: 30_000 };
    const next = requestEntry(second, `${job.id}:2:r0`, 30_000);
    await store.commit([creating(job, { outbox: [first] })]);
    const afterCreation = await inGsi3(tableName, job);
    await store.ackOutbox([first.id]);

    // Act: the handler that committed the second round crashed before sending it.
    await store.commit([updating(job, second, { outbox: [next] })]);
    const afterSecond = await inGsi3(tableName, job);
    const early = await store.pendingOutbox({ limit: 100, createdBefore: 30_000 });
    const recovered = await store.pendingOutbox({ limit: 100, createdBefore: 100_000 });
    const afterRecovery = await inGsi3(tableName, job);
    const again = await new DynamoDbStore({ client: (await emulator()).client, tableName }).pendingOutbox({
      limit: 1,
      createdBefore: 100_000,
    });

    // Assess
    expect(afterCreation).toBeUndefined();
    expect(afterSecond).toBeUndefined();
    expect(early.entries).toEqual([]);
    expect(recovered.entries).toEqual([next]);
    expect(afterRecovery).toMatch(/^000000000001000#/);
    expect(again).toEqual({ entries: [next] });
  });

  it('puts a head holding entries into gsi3 when its job is a minute old, changes status, ends, or its workflow was not seen registered', async () => {
    // Prepare
    const { store, tableName, workflow } = await withWorkflow();
    const job = (overrides: JobOverrides = {}) => aJob({ workflow, ...overrides });
    const [old, waiting, ended, unknown, empty] = [
      job(),
      job(),
      job(),
      job({ workflow: `unseen-${randomBytes(4).toString('hex')}` }),
      job(),
    ] as [JobRecord, JobRecord, JobRecord, JobRecord, JobRecord];
    const request = (of: JobRecord) => requestEntry(of, `${of.id}:1:r0`, 1_000);
    await store.commit([
      ...[old, waiting, unknown, empty].map((of) => creating(of, { outbox: [request(of)] })),
      creating(ended, { outbox: [followUpOf(ended, 1_000)] }),
    ]);
    await store.ackOutbox([request(old).id, request(empty).id]);
    const { next: older, request: later } = nextRound(old, 61_000);
    const answered = nextRound(empty, 2_000).next;

    // Act
    await store.commit([
      updating(old, older, { outbox: [later] }),
      updating(waiting, { ...waiting, rev: 2, status: 'waiting', updatedAt: 2_000 }),
      updating(ended, { ...ended, rev: 2, status: 'completed', updatedAt: 2_000, endedAt: 2_000 }),
      updating(empty, { ...answered, status: 'waiting' }),
    ]);

    // Assess
    expect(await inGsi3(tableName, old)).toMatch(/^000000000061000#/);
    expect(await inGsi3(tableName, waiting)).toMatch(/^000000000001000#000000#/);
    expect(await inGsi3(tableName, ended)).toMatch(/^000000000001000#000000#/);
    expect(await inGsi3(tableName, unknown)).toMatch(/^000000000001000#/);
    expect(await inGsi3(tableName, empty)).toBeUndefined();
  });

  it('clears the requests of a young head that the log names sent, without putting the head into gsi3', async () => {
    // Prepare
    const { store, tableName, workflow } = await withWorkflow();
    const job = aJob({ workflow, createdAt: 1_000, updatedAt: 1_000 });
    const first = requestEntry(job, `${job.id}:1:r0`, 1_000);
    await store.commit([creating(job, { outbox: [first] })]);
    await store.ackOutbox([first.id]);

    // Act: the worker takes longer than a minute to answer.
    const recovered = await store.pendingOutbox({ limit: 100, createdBefore: 100_000 });

    // Assess
    expect(recovered.entries).toEqual([]);
    const head = await rawItem(tableName, `JOB#${job.id}`, 'J');
    expect(Object.keys(head ?? {}).filter((name) => /^(oi|o_|gsi3)/.test(name))).toEqual([]);
  });

  it('moves the watermark after a whole pass with createdBefore, past the jobs no young commit can reach any more', async () => {
    // Prepare
    const { store, tableName, workflow } = await withWorkflow();
    const mark = async () => (await rawItem(tableName, 'RCV', 'young'))?.w?.N;
    const late = aJob({ workflow, createdAt: 700_000, updatedAt: 700_000 });
    const unsent = requestEntry(late, `${late.id}:1:r0`, 700_000);

    // Act
    await store.pendingOutbox({ limit: 100 });
    const withoutCreatedBefore = await mark();
    await store.pendingOutbox({ limit: 100, createdBefore: 1_000_000 });
    const afterPass = await mark();
    await store.pendingOutbox({ limit: 100, createdBefore: 900_000 });
    const afterEarlierPass = await mark();
    await store.commit([creating(late, { outbox: [unsent] })]);
    const recovered = await store.pendingOutbox({ limit: 100, createdBefore: 1_000_000 });

    // Assess
    expect(withoutCreatedBefore).toBeUndefined();
    expect(afterPass).toBe(String(1_000_000 - 60_000 - 300_000));
    expect(afterEarlierPass).toBe(afterPass);
    expect(recovered.entries).toEqual([unsent]);
  });
});

describe('DynamoDbStore on DynamoDB Local: counting top-level jobs', { timeout: TIMEOUT }, () => {
  /** A store on a fresh table whose client records the commands it sends. */
  async function recordingStore(): Promise<{ store: DynamoDbStore; tableName: string; commands: string[] }> {
    const local = await emulator();
    const tableName = uniqueTableName('dynamodb-counts');
    await createSwitchyardTable(local.client, tableName);
    const client = local.newClient();
    const commands: string[] = [];
    client.middlewareStack.add(
      (next, context) => async (args) => {
        commands.push(context.commandName ?? '');
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    return { store: new DynamoDbStore({ client, tableName }), tableName, commands };
  }

  const counterItems = async (tableName: string, workflow: string) => {
    const items = [];
    for (let shard = 0; shard < 8; shard++) {
      const item = await rawItem(tableName, `CNT#${String(shard).padStart(2, '0')}`, workflow);
      if (item) items.push(item);
    }
    return items;
  };

  it('creates a job with its first request in one write, counting it from the listing index until it ends', async () => {
    // Prepare
    const { store, tableName, commands } = await recordingStore();
    const workflow = `counts-${randomBytes(4).toString('hex')}`;
    const job = aJob({ workflow });

    // Act
    await store.commit([creating(job, { outbox: [requestEntry(job, `${job.id}:1:r0`, 5)] })]);
    const written = [...commands];
    const whileRunning = await store.countJobs(workflow);
    const countersWhileRunning = await counterItems(tableName, workflow);
    await store.commit([updating(job, { ...job, rev: 2, status: 'completed', endedAt: 10 })]);

    // Assess
    expect(written).toEqual(['UpdateItemCommand']);
    expect(countersWhileRunning).toEqual([]);
    expect(whileRunning).toEqual({
      pending: 0,
      waiting: 0,
      running: 1,
      paused: 0,
      scheduled: 0,
      queued: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      aborted: 0,
    });
    expect(await store.countJobs(workflow)).toEqual({
      pending: 0,
      waiting: 0,
      running: 0,
      paused: 0,
      scheduled: 0,
      queued: 0,
      completed: 1,
      failed: 0,
      cancelled: 0,
      aborted: 0,
    });
  });

  it('counts a job that fails, runs again and waits exactly once in each status, ignoring waiting and running numbers that counters held before', async () => {
    // Prepare
    const { store, tableName } = await recordingStore();
    const workflow = `counts-${randomBytes(4).toString('hex')}`;
    const [job, other] = [aJob({ workflow }), aJob({ workflow })] as [JobRecord, JobRecord];
    const local = await emulator();
    await local.client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: 'CNT#00' }, sk: { S: workflow } },
        UpdateExpression: 'ADD running :n, waiting :n',
        ExpressionAttributeValues: { ':n': { N: '5' } },
      }),
    );
    const failed = { ...job, rev: 2, status: 'failed' as const, endedAt: 10 };
    const again = { ...failed, rev: 3, status: 'running' as const, endedAt: undefined };
    const waiting = { ...again, rev: 4, status: 'waiting' as const };

    // Act
    await store.commit([creating(job), creating(other)]);
    await store.commit([updating(job, failed)]);
    const afterFailing = await store.countJobs(workflow);
    await store.commit([updating(failed, again)]);
    await store.commit([updating(again, waiting)]);

    // Assess
    expect(afterFailing).toEqual({
      pending: 0,
      waiting: 0,
      running: 1,
      paused: 0,
      scheduled: 0,
      queued: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
      aborted: 0,
    });
    // A job not started (the engine's `waiting`) is listed and counted as `pending`.
    expect(await store.countJobs(workflow)).toEqual({
      pending: 1,
      waiting: 0,
      running: 1,
      paused: 0,
      scheduled: 0,
      queued: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
      aborted: 0,
    });
  });

  it('lists jobs that have not ended of a registered workflow, and ended ones, without a workflow named', async () => {
    // Prepare
    const { store } = await recordingStore();
    const definition = aWorkflow(`listed-${randomBytes(4).toString('hex')}`);
    await store.saveWorkflow(definition, 1_000);
    const running = aJob({ workflow: definition.name });
    const unregistered = aJob({ workflow: `ended-${randomBytes(4).toString('hex')}` });

    // Act
    await store.commit([creating(running), creating(unregistered)]);
    await store.commit([
      updating(unregistered, { ...unregistered, rev: 2, status: 'completed', endedAt: 10 }),
    ]);

    // Assess
    expect((await store.queryJobs({ status: 'running' })).jobs.map((job) => job.id)).toEqual([running.id]);
    expect((await store.queryJobs({ status: 'completed' })).jobs.map((job) => job.id)).toEqual([
      unregistered.id,
    ]);
    expect((await store.queryJobs({})).jobs.map((job) => job.id).sort()).toEqual(
      [running.id, unregistered.id].sort(),
    );
  });
});

describe('DynamoDbStore on DynamoDB Local: what each child costs', { timeout: TIMEOUT }, () => {
  let store: DynamoDbStore;
  let tableName: string;
  beforeAll(async () => {
    ({ store, tableName } = await freshStore());
  });

  const fanOut = (parent: JobRecord, total: number, createdAt: number) => {
    const children = Array.from({ length: total }, (_, index) =>
      aChild(parent, 'fan', index, { workflow: parent.workflow, createdAt, updatedAt: createdAt }),
    );
    const outbox: OutboxEntry[] = children.map((child, n) => ({
      id: `${parent.id}:2:r${n}`,
      kind: 'request',
      jobId: child.id,
      createdAt,
      request: aRequest(child),
    }));
    return { children, outbox };
  };

  const pendingOf = async (from: DynamoDbStore, prefix: string, limit = 100): Promise<OutboxEntry[]> => {
    const all: OutboxEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await from.pendingOutbox({ limit, cursor });
      all.push(...page.entries.filter((entry) => entry.id.startsWith(prefix)));
      cursor = page.cursor;
    } while (cursor);
    return all;
  };

  it('lists a fan-out of 2,100 children with the top-level jobs, newest first, in pages, from one index entry per 1,000 children and one item naming 20 of them', async () => {
    // Prepare
    const workflow = `listing-${randomBytes(4).toString('hex')}`;
    const parent = aJob({ workflow, createdAt: 1_000 });
    const older = aJob({ workflow, createdAt: 500 });
    const newer = aJob({ workflow, createdAt: 3_000 });
    const { children } = fanOut(parent, 2_100, 2_000);
    for (const job of [older, newer]) await store.commit([creating(job)]);
    await store.commit([creating(parent)]);

    // Act
    await store.commit([updating(parent, { ...parent, rev: 2 }, { creates: children })]);
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.queryJobs({ workflow, includeChildren: true, limit: 250, cursor });
      expect(page.jobs.length).toBeLessThanOrEqual(250);
      listed.push(...page.jobs.map((job) => job.id));
      cursor = page.cursor;
    } while (cursor);

    // Assess
    expect(listed).toEqual([
      newer.id,
      ...[...children].reverse().map((child) => child.id),
      parent.id,
      older.id,
    ]);
    const bucket = (n: number) => `KIDS#${parent.id}#fan#${String(n).padStart(6, '0')}`;
    for (const n of [0, 1, 2]) expect((await rawItem(tableName, bucket(n), 'L'))?.gsi1pk).toBeDefined();
    expect(await rawItem(tableName, bucket(3), 'L')).toBeUndefined();
    // The bucket's children are named by packs of 20: 50 items a bucket, each under a write unit's 1 KB.
    const packs = (await itemSizes(tableName)).filter(
      (item) => item.key.startsWith(`${bucket(1)}/`) && item.key !== `${bucket(1)}/L`,
    );
    expect(packs.length).toBe(50);
    expect(Math.max(...packs.map((pack) => pack.bytes))).toBeLessThan(1_024);
    const pack = await rawItem(
      tableName,
      bucket(1),
      (packs.find((p) => p.key.includes('/P#000001220#'))?.key ?? '').split('/')[1] ?? '',
    );
    expect(pack?.ids?.L?.[14]).toEqual({ S: (children[1_234] as JobRecord).id });
    expect(pack?.gsi1pk).toBeUndefined();
    const waiting = await store.queryJobs({ workflow, includeChildren: true, status: 'waiting' });
    expect(waiting.jobs).toEqual([]);
  });

  it('reads children that older code indexed one entry each beside packs, in the children page, the listing and the tree', async () => {
    // Prepare: 45 children indexed by packs; those of 20 to 39 then indexed as older code did, one entry each.
    const workflow = `older-${randomBytes(4).toString('hex')}`;
    const parent = aJob({ workflow, createdAt: 1_000 });
    const { children } = fanOut(parent, 45, 2_000);
    await store.commit([creating(parent)]);
    await store.commit([updating(parent, { ...parent, rev: 2 }, { creates: children })]);
    const bucket = `KIDS#${parent.id}#fan#000000`;
    const local = await emulator();
    const middle = (await itemSizes(tableName)).find((item) => item.key.startsWith(`${bucket}/P#000000020#`));
    await local.client.send(
      new DeleteItemCommand({
        TableName: tableName,
        Key: { pk: { S: bucket }, sk: { S: (middle?.key ?? '').slice(bucket.length + 1) } },
      }),
    );
    for (const child of children.slice(20, 40)) {
      const index = child.parent?.index ?? -1;
      await local.client.send(
        new PutItemCommand({
          TableName: tableName,
          Item: {
            pk: { S: bucket },
            sk: { S: `${String(index).padStart(9, '0')}#${child.id}` },
            id: { S: child.id },
            ix: { N: String(index) },
          },
        }),
      );
    }

    // Act
    const all = await store.listChildren(parent.id, 'fan', { limit: 100 });
    const page = await store.listChildren(parent.id, 'fan', { fromIndex: 15, limit: 10 });
    const listed = await store.queryJobs({ workflow, includeChildren: true, limit: 100 });
    const levels = await treeLevels(new DynamoDbTable(local.client, tableName), parent.id);

    // Assess
    expect(middle).toBeDefined();
    expect(all.children.map((child) => child.id)).toEqual(children.map((child) => child.id));
    expect(all.nextIndex).toBeUndefined();
    expect(page.children.map((child) => child.parent?.index)).toEqual([
      15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
    ]);
    expect(page.nextIndex).toBe(25);
    expect(listed.jobs.map((job) => job.id)).toEqual(
      [...children.map((child) => child.id)].reverse().concat(parent.id),
    );
    expect(levels.map((level) => [...level].sort())).toEqual([
      [parent.id],
      children.map((child) => child.id).sort(),
    ]);
  });

  it("walks a tree through its children only: an index entry naming another job (a clash's leftover) is passed over", async () => {
    // Prepare: a job of another tree, and a fan-out whose index also names it, as a commit leaves an
    // entry written before it found that a child's id was taken.
    const workflow = `clash-${randomBytes(4).toString('hex')}`;
    const other = aJob({ workflow: `other-${workflow}` });
    await store.commit([creating(other)]);
    const parent = aJob({ workflow });
    const { children } = fanOut(parent, 30, 2_000);
    await store.commit([creating(parent)]);
    await store.commit([updating(parent, { ...parent, rev: 2 }, { creates: children })]);
    const local = await emulator();
    await local.client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: {
          pk: { S: `KIDS#${parent.id}#fan#000000` },
          sk: { S: 'P#000000000#leftover0000' },
          ix: { N: '0' },
          ids: { L: [{ S: other.id }] },
        },
      }),
    );

    // Act
    const levels = await treeLevels(new DynamoDbTable(local.client, tableName), parent.id);
    const listed = await store.listChildren(parent.id, 'fan', { limit: 100 });

    // Assess
    expect(levels.map((level) => [...level].sort())).toEqual([
      [parent.id],
      children.map((child) => child.id).sort(),
    ]);
    expect(listed.children.map((child) => child.id)).toEqual(children.map((child) => child.id));
  });

  it('keeps the requests of created children in groups that a restarted store sends, leaving out stopped children, and deletes a group once acknowledged', async () => {
    // Prepare: a fan-out of 300 (a big commit) and a small one of 3 (one transaction).
    for (const total of [300, 3]) {
      const parent = aJob();
      const { children, outbox } = fanOut(parent, total, 4_000);
      await store.commit([creating(parent)]);
      await store.commit([updating(parent, { ...parent, rev: 2 }, { creates: children, outbox })]);
      const prefix = `${parent.id}:2:`;

      // Act: a crash before sending: another store recovers them.
      const restarted = new DynamoDbStore({ client: (await emulator()).client, tableName });
      const recovered = await pendingOf(restarted, prefix, 100);
      const [first, second] = children as [JobRecord, JobRecord];
      await store.commit([
        updating(first, { ...first, rev: 2, status: 'cancelled' }, { dropUnsent: true }),
        updating(
          second,
          {
            ...second,
            rev: 2,
            status: 'completed',
            steps: PersistentList.of(second.steps.map((step) => ({ ...step, status: 'completed' as const }))),
          },
          { childOutcome: { parentId: parent.id, step: 'fan', index: 1, status: 'completed' } },
        ),
      ]);
      const again = new DynamoDbStore({ client: (await emulator()).client, tableName });
      const open = await pendingOf(again, prefix, 1_000);
      await again.ackOutbox(open.slice(0, -1).map((entry) => entry.id));
      const groupsBeforeLast = (await itemSizes(tableName)).filter((item) =>
        item.key.startsWith(`OUT#${prefix}`),
      );
      await again.ackOutbox(open.slice(-1).map((entry) => entry.id));

      // Assess
      expect(recovered).toEqual(outbox);
      expect(open).toEqual(outbox.slice(2));
      expect(groupsBeforeLast.length).toBeGreaterThan(0);
      expect(groupsBeforeLast.length).toBeLessThanOrEqual(Math.ceil(total / 100));
      expect((await itemSizes(tableName)).filter((item) => item.key.startsWith(`OUT#${prefix}`))).toEqual([]);
      expect(await pendingOf(store, prefix)).toEqual([]);
    }
  });

  it('counts a reply batch of children in one write each time, and a stale or repeated child not at all', async () => {
    // Prepare
    const parent = aJob();
    const children = Array.from({ length: 12 }, (_, index) => aChild(parent, 'fan', index));
    await store.commit([
      creating(parent, {
        creates: children,
        fanInits: [{ parentId: parent.id, step: 'fan', total: 12, done: 0, failed: 0 }],
      }),
    ]);
    const finish = (child: JobRecord, from = child) => {
      const index = child.parent?.index ?? 0;
      const status = index === 3 ? ('failed' as const) : ('completed' as const);
      return updating(
        from,
        { ...from, rev: from.rev + 1, status, result: { n: index } },
        { childOutcome: { parentId: parent.id, step: 'fan', index, status } },
      );
    };
    const stale = finish(children[5] as JobRecord, { ...(children[5] as JobRecord), rev: 7 });

    // Act
    const first = await store.commit([...children.slice(0, 5).map((child) => finish(child)), stale]);
    const repeated = await store.commit(children.slice(0, 5).map((child) => finish(child)));
    const rest = await store.commit(children.slice(5).map((child) => finish(child)));

    // Assess
    expect(first.slice(0, 5).every((result) => result.ok)).toBe(true);
    expect(first[5]).toEqual({ ok: false, conflict: true });
    expect(repeated.every((result) => !result.ok)).toBe(true);
    expect(rest.every((result) => result.ok)).toBe(true);
    expect(rest.at(-1)).toEqual({ ok: true, fanCounts: { total: 12, done: 11, failed: 1 } });
    expect(await store.getFanCounts(parent.id, 'fan')).toEqual({ total: 12, done: 11, failed: 1 });
    expect((await store.getJob((children[4] as JobRecord).id))?.status).toBe('completed');
    expect((await store.getJob((children[5] as JobRecord).id))?.status).toBe('completed');
  });

  it('counts top-level jobs of one workflow changing status in one call together, exactly once', async () => {
    // Prepare
    const workflow = `batch-${randomBytes(4).toString('hex')}`;
    const jobs = Array.from({ length: 6 }, () => aJob({ workflow }));
    for (const job of jobs) await store.commit([creating(job)]);
    // The store knows their revisions (the manager reads a job before committing it).
    await store.getJobs(jobs.map((job) => job.id));
    const end = (job: JobRecord, status: 'completed' | 'waiting') =>
      updating(job, { ...job, rev: 2, status, endedAt: status === 'completed' ? 2_000 : undefined });
    const stale = updating({ ...(jobs[5] as JobRecord), rev: 4 }, { ...(jobs[5] as JobRecord), rev: 5 });

    // Act
    const results = await store.commit([
      ...jobs.slice(0, 4).map((job) => end(job, 'completed')),
      end(jobs[4] as JobRecord, 'waiting'),
      { ...stale, job: { ...stale.job, status: 'completed' } },
    ]);
    const repeated = await store.commit(jobs.slice(0, 4).map((job) => end(job, 'completed')));

    // Assess
    expect(results).toEqual([...Array(5).fill({ ok: true }), { ok: false, conflict: true }]);
    expect(repeated.every((result) => !result.ok)).toBe(true);
    // A job not started (the engine's `waiting`) is listed and counted as `pending`.
    expect(await store.countJobs(workflow)).toEqual({
      pending: 1,
      waiting: 0,
      running: 1,
      paused: 0,
      scheduled: 0,
      queued: 0,
      completed: 4,
      failed: 0,
      cancelled: 0,
      aborted: 0,
    });
    const completed = await store.queryJobs({ workflow, status: 'completed' });
    expect(completed.jobs.map((job) => job.id).sort()).toEqual(
      jobs
        .slice(0, 4)
        .map((job) => job.id)
        .sort(),
    );
  });

  it("writes only the last child's fan-in follow-up, and a watcher fans in when a crash lost it", async () => {
    // Prepare: a parent whose fan-out step runs, with 3 children.
    const running = { name: 'fan', status: 'running' as const, attempts: 1, firstAttempt: 1 };
    const parent = aJob({ steps: [running] });
    const children = [0, 1, 2].map((index) => aChild(parent, 'fan', index));
    await store.commit([
      creating(parent, {
        creates: children,
        fanInits: [{ parentId: parent.id, step: 'fan', total: 3, done: 0, failed: 0 }],
      }),
    ]);
    const finish = (child: JobRecord): Commit => finishingChild(parent.id, child);

    // Act
    const results = [];
    for (const child of children) results.push(...(await store.commit([finish(child)])));
    const last = `${(children[2] as JobRecord).id}:2:f0`;
    const kept = await pendingOf(store, (children[2] as JobRecord).id);
    // The crash: the last child's follow-up is lost before it is stored (here: taken away).
    await (await emulator()).client.send(
      new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: `OUT#${last}` }, sk: { S: 'O' } } }),
    );
    const restarted = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const watched = await pendingOf(restarted, `FAN#${parent.id}`);
    await restarted.ackOutbox(watched.map((entry) => entry.id));
    const afterAck = await pendingOf(restarted, `FAN#${parent.id}`);
    await store.commit([
      updating(parent, {
        ...parent,
        rev: 2,
        steps: PersistentList.of([{ ...running, status: 'completed' }]),
      }),
    ]);
    const afterFanIn = await pendingOf(restarted, `FAN#${parent.id}`);

    // Assess
    expect(results.map((result) => result.ok && result.leftOut)).toEqual([
      [`${(children[0] as JobRecord).id}:2:f0`],
      [`${(children[1] as JobRecord).id}:2:f0`],
      undefined,
    ]);
    expect(kept.map((entry) => entry.id)).toEqual([last]);
    expect(watched).toEqual([
      {
        id: `FAN#${parent.id}#fan`,
        kind: 'followUp',
        jobId: parent.id,
        createdAt: expect.any(Number),
        followUp: { kind: 'childFinished', parentId: parent.id, step: 'fan', index: 2, status: 'completed' },
      },
    ]);
    expect(afterAck).toHaveLength(1);
    expect(afterFanIn).toEqual([]);
    const shard = await rawItem(tableName, `FAN#${parent.id}#fan`, '000');
    expect(shard?.gsi3pk).toBeUndefined();
    expect(shard?.dn).toEqual({ N: '3' });
  });

  it('writes one fan-in follow-up when two managers finish the last children at once; counters set anew take it again', async () => {
    // Prepare: parents whose fan-out of 2 children runs; two stores, as two reply batches in two Lambdas.
    const other = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const running = { name: 'fan', status: 'running' as const, attempts: 1, firstAttempt: 1 };
    const finish = (parent: JobRecord, child: JobRecord): Commit => finishingChild(parent.id, child);
    const fanOut = async () => {
      const parent = aJob({ steps: [running] });
      const children = [0, 1].map((index) => aChild(parent, 'fan', index));
      await store.commit([
        creating(parent, {
          creates: children,
          fanInits: [{ parentId: parent.id, step: 'fan', total: 2, done: 0, failed: 0 }],
        }),
      ]);
      return { parent, children: children as [JobRecord, JobRecord] };
    };
    const storedFollowUps = async (children: readonly JobRecord[]) =>
      (await Promise.all(children.map((child) => rawItem(tableName, `OUT#${child.id}:2:f0`, 'O')))).filter(
        Boolean,
      ).length;

    // Act: each fan-out's two children finish at the same moment, each in its own store.
    const raced = [];
    for (let round = 0; round < 5; round++) {
      const { parent, children } = await fanOut();
      const [first, second] = await Promise.all([
        store.commit([finish(parent, children[0])]),
        other.commit([finish(parent, children[1])]),
      ]);
      raced.push({
        children,
        leftOut: [first?.[0], second?.[0]].map((r) => (r?.ok ? (r.leftOut ?? []) : ['?'])),
      });
    }
    // Another manager took the fan-in (its commit between this child's count and its follow-up).
    const taken = await fanOut();
    await store.commit([finish(taken.parent, taken.children[0])]);
    await (await emulator()).client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: `FAN#${taken.parent.id}#fan` }, sk: { S: '000' } },
        UpdateExpression: 'SET fi = :t',
        ExpressionAttributeValues: { ':t': { S: 'another-commit' } },
      }),
    );
    const [afterTaken] = await other.commit([finish(taken.parent, taken.children[1])]);
    const watcher = await pendingOf(other, `FAN#${taken.parent.id}`);
    // A retried fan-out: its counters are written anew, and its last child takes the fan-in again.
    await store.setFanCounts(taken.parent.id, 'fan', { total: 2, done: 1, failed: 0 });
    const retriedChild = { ...(taken.children[1] as JobRecord), rev: 2 };
    const [afterRetry] = await store.commit([finishingChild(taken.parent.id, retriedChild)]);

    // Assess: one follow-up a fan-out, whichever child wrote it; the others are left out.
    for (const { children, leftOut } of raced) {
      expect(await storedFollowUps(children)).toBe(1);
      expect(leftOut.flat()).toHaveLength(1);
    }
    expect(afterTaken?.ok && afterTaken.leftOut).toEqual([`${taken.children[1].id}:2:f0`]);
    expect(await storedFollowUps(taken.children)).toBe(0);
    // The fan-in is not lost: the fan-out's watcher offers it, as after a crash.
    expect(watcher.map((entry) => entry.id)).toEqual([`FAN#${taken.parent.id}#fan`]);
    expect(afterRetry?.ok && afterRetry.leftOut).toBeUndefined();
    expect(await rawItem(tableName, `OUT#${retriedChild.id}:3:f0`, 'O')).toBeDefined();
  });

  it("fans in a continueOnError fan-out with a failed child after a crash lost the last child's follow-up, as the engine's rule says, and not one without continueOnError", async () => {
    // Prepare: two fan-outs of 3 children; child 0 fails first (its follow-up is always written, and
    // was carried out), then 1 and 2 complete; the last one's follow-up is lost in a crash.
    const running = { name: 'fan', status: 'running' as const, attempts: 1, firstAttempt: 1 };
    const crash = async (continueOnError: boolean) => {
      const parent = aJob({ steps: [running] });
      const children = [0, 1, 2].map((index) => aChild(parent, 'fan', index));
      await store.commit([
        creating(parent, {
          creates: children,
          fanInits: [
            {
              parentId: parent.id,
              step: 'fan',
              total: 3,
              done: 0,
              failed: 0,
              ...(continueOnError ? { continueOnError: true } : {}),
            },
          ],
        }),
      ]);
      for (const child of children) {
        const index = child.parent?.index ?? 0;
        const status = index === 0 ? ('failed' as const) : ('completed' as const);
        const outcome = { parentId: parent.id, step: 'fan', index, status };
        const id = `${child.id}:2:f0`;
        await store.commit([
          updating(
            child,
            { ...child, rev: 2, status },
            {
              childOutcome: outcome,
              outbox: [
                {
                  id,
                  kind: 'followUp',
                  jobId: child.id,
                  createdAt: 5_000,
                  followUp: {
                    kind: 'childFinished',
                    ...outcome,
                    ...(status === 'completed' ? { onlyIfLast: true as const } : {}),
                  },
                },
              ],
            },
          ),
        ]);
        if (index === 0) await store.ackOutbox([id]);
      }
      const lost = `${(children[2] as JobRecord).id}:2:f0`;
      await (await emulator()).client.send(
        new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: `OUT#${lost}` }, sk: { S: 'O' } } }),
      );
      return parent;
    };
    const tolerant = await crash(true);
    const strict = await crash(false);

    // Act
    const restarted = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const recovered = [
      ...(await pendingOf(restarted, `FAN#${tolerant.id}`)),
      ...(await pendingOf(restarted, `FAN#${strict.id}`)),
    ];
    // A retried fan-out's counters are set anew: the step's continueOnError stays with them.
    await store.setFanCounts(tolerant.id, 'fan', { total: 3, done: 2, failed: 1 });
    const afterRecount = await pendingOf(restarted, `FAN#${tolerant.id}`);

    // Assess
    expect(await store.getFanCounts(tolerant.id, 'fan')).toEqual({ total: 3, done: 2, failed: 1 });
    expect(recovered).toEqual([
      {
        id: `FAN#${tolerant.id}#fan`,
        kind: 'followUp',
        jobId: tolerant.id,
        createdAt: expect.any(Number),
        followUp: {
          kind: 'childFinished',
          parentId: tolerant.id,
          step: 'fan',
          index: 2,
          status: 'completed',
        },
      },
    ]);
    expect(afterRecount.map((entry) => entry.id)).toEqual([`FAN#${tolerant.id}#fan`]);
  });

  it('leaves out no follow-up of a fan-out without a watcher (one created before watchers were)', async () => {
    // Prepare
    const parent = aJob({ steps: [{ name: 'fan', status: 'running', attempts: 1, firstAttempt: 1 }] });
    const child = aChild(parent, 'fan', 0);
    await store.commit([
      creating(parent, {
        creates: [child, aChild(parent, 'fan', 1)],
        fanInits: [{ parentId: parent.id, step: 'fan', total: 2, done: 0, failed: 0 }],
      }),
    ]);
    await (await emulator()).client.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: `FAN#${parent.id}#fan` }, sk: { S: '000' } },
        UpdateExpression: 'REMOVE wa, gsi3pk, gsi3sk',
      }),
    );
    const older = new DynamoDbStore({ client: (await emulator()).client, tableName });
    const outcome = { parentId: parent.id, step: 'fan', index: 0, status: 'completed' as const };
    const id = `${child.id}:2:f0`;

    // Act
    const [result] = await older.commit([
      updating(
        child,
        { ...child, rev: 2, status: 'completed' },
        {
          childOutcome: outcome,
          outbox: [
            {
              id,
              kind: 'followUp',
              jobId: child.id,
              createdAt: 6_000,
              followUp: { kind: 'childFinished', ...outcome, onlyIfLast: true },
            },
          ],
        },
      ),
    ]);

    // Assess
    expect(result).toEqual({ ok: true, fanCounts: { total: 2, done: 1, failed: 0 } });
    expect((await pendingOf(older, child.id)).map((entry) => entry.id)).toEqual([id]);
  });
});
