import { type AttributeValue, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../../engine/index.js';
import { DynamoDbStore } from '../../../../functions/adapters/dynamodb/store.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../../support/dynamodb-local.js';
import { SimulatedWorld } from '../../../support/simulated-world.js';

/**
 * Retention by TTL on DynamoDB Local. DynamoDB Local keeps TTL attributes but does not delete on
 * time (nor does DynamoDB: "typically deletes expired items within two days of expiration",
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html), so these
 * tests read the `expiresAt` every item carries rather than wait for deletions.
 */

const TIMEOUT = 180_000;
const RETENTION_SECONDS = 30 * 86_400;
const CHILDREN = 120;

const TREE = `workflows:
  - name: tree
    steps:
      - name: each
        task: per-item
      - name: call
        workflow: callee
        depends: [ each ]
      - name: last
        depends: [ call ]
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
  - name: callee
    steps:
      - name: inner
`;

type Item = Record<string, AttributeValue>;

let dynamo: Promise<DynamoDbLocal> | undefined;
afterAll(async () => {
  await (await dynamo)?.stop();
});

async function freshTable(): Promise<{ local: DynamoDbLocal; tableName: string }> {
  dynamo ??= startDynamoDbLocal();
  const local = await dynamo;
  const tableName = uniqueTableName('ttl-retention');
  await createSwitchyardTable(local.client, tableName);
  return { local, tableName };
}

async function scan(local: DynamoDbLocal, tableName: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Item | undefined;
  do {
    const page = await local.client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The job a job item belongs to: `JOB#<id>`, `KIDS#<parent>#…`, `FAN#<parent>#…`; undefined for other items. */
function ownerOf(item: Item): string | undefined {
  const pk = item.pk?.S ?? '';
  const match = /^(?:JOB|KIDS|FAN)#([^#]+)/.exec(pk);
  return match?.[1];
}

const key = (item: Item): string => `${item.pk?.S}/${item.sk?.S}`;
const expiry = (item: Item): number | undefined => (item.expiresAt?.N ? Number(item.expiresAt.N) : undefined);
const endOf = (job: JobRecord): number => Math.ceil((job.endedAt ?? 0) / 1_000) + RETENTION_SECONDS;

/** Requests sent and not yet answered, by world. */
const unanswered = new WeakMap<SimulatedWorld, ReturnType<SimulatedWorld['take']>>();

/** Answers the requests sent (each with its own body) until none is left, or `until` says stop. */
async function answerAll(world: SimulatedWorld, until?: () => boolean): Promise<void> {
  const queue = unanswered.get(world) ?? [];
  unanswered.set(world, queue);
  for (;;) {
    if (!queue.length) queue.push(...world.take());
    const request = queue.shift();
    if (!request) return;
    if (until?.()) {
      queue.unshift(request);
      return;
    }
    world.now += 10;
    await world.reply(request);
  }
}

async function treeWorld(store: DynamoDbStore): Promise<{ world: SimulatedWorld; rootId: string }> {
  const world = new SimulatedWorld(store);
  await world.register(TREE);
  const items = Array.from({ length: CHILDREN }, (_, n) => ({ n }));
  const rootId = await world.start('tree', { items });
  return { world, rootId };
}

describe('DynamoDB retention by TTL', () => {
  it(
    'gives every item of a finished tree (120 children: a commit too big for one transaction; a called job) its root’s end + retention, and none while it runs',
    async () => {
      // Prepare
      const { local, tableName } = await freshTable();
      const store = new DynamoDbStore({
        client: local.client,
        tableName,
        retentionSeconds: RETENTION_SECONDS,
      });
      const { world, rootId } = await treeWorld(store);

      // Act: half the children answered, then the rest, the called job and the last step
      let answered = 0;
      await answerAll(world, () => answered++ >= CHILDREN / 2);
      const halfway = await scan(local, tableName);
      await answerAll(world);
      const root = await world.job(rootId);
      const calledId = root.steps.find((step) => step.name === 'call')?.job;
      const called = calledId ? await world.job(calledId) : undefined;
      const beforeStamp = await scan(local, tableName);
      const deleted = await store.deleteFinishedJobs(world.now + RETENTION_SECONDS * 1_000 + 1);
      const after = await scan(local, tableName);

      // Assess
      expect(root.status).toBe('completed');
      expect(called?.status).toBe('completed');
      const children = (await store.listChildren(rootId, 'each', { limit: 1_000 })).children;
      expect(children).toHaveLength(CHILDREN);
      const tree = new Set([rootId, ...children.map((child) => child.id)]);

      // While the root ran, none of its tree's items had a TTL.
      const runningItems = halfway.filter((item) => tree.has(ownerOf(item) ?? ''));
      expect(runningItems.length).toBeGreaterThan(CHILDREN);
      expect(runningItems.filter((item) => item.expiresAt).map(key)).toEqual([]);

      // At its end only the root's head (and chunks) carry it; the head waits in gsi2 for the stamp.
      const rootHead = beforeStamp.find((item) => key(item) === `JOB#${rootId}/J`);
      expect(expiry(rootHead ?? {})).toBe(endOf(root));
      expect(rootHead?.gsi2pk?.S).toMatch(/^TTL#/);

      // The sweep stamped the tree and deleted nothing: every item of it expires with the root.
      expect(deleted).toBe(0);
      const treeItems = after.filter((item) => tree.has(ownerOf(item) ?? ''));
      expect(treeItems.length).toBe(runningItems.length);
      const kinds = new Set(treeItems.map((item) => `${item.pk?.S?.split('#')[0]}/${item.sk?.S?.[0]}`));
      expect([...kinds].sort()).toEqual(['FAN/0', 'JOB/D', 'JOB/J', 'JOB/K', 'JOB/S', 'KIDS/L', 'KIDS/P']);
      expect(treeItems.filter((item) => expiry(item) !== endOf(root)).map(key)).toEqual([]);
      expect(after.find((item) => key(item) === `JOB#${rootId}/J`)?.gsi2pk).toBeUndefined();

      // The called job is a root of its own: its items expire with its own end.
      const calledItems = after.filter((item) => ownerOf(item) === calledId);
      expect(calledItems.length).toBeGreaterThan(0);
      expect(calledItems.filter((item) => expiry(item) !== endOf(called as JobRecord)).map(key)).toEqual([]);

      // Outbox items left of the tree, if any, expire too; nothing else of a job lacks a TTL.
      const jobItems = after.filter((item) => /^(JOB|KIDS|FAN|OUT)#/.test(item.pk?.S ?? ''));
      expect(jobItems.filter((item) => expiry(item) === undefined).map(key)).toEqual([]);
      expect((await store.getJob(rootId))?.status).toBe('completed');
    },
    TIMEOUT,
  );

  it(
    'stamps a tree over several runs when one run’s budget is smaller than the tree',
    async () => {
      // Prepare
      const { local, tableName } = await freshTable();
      const options = { client: local.client, tableName, retentionSeconds: RETENTION_SECONDS };
      const { world, rootId } = await treeWorld(new DynamoDbStore(options));
      await answerAll(world);
      const small = new DynamoDbStore({ ...options, sweepLimits: { stampWrites: 10, sweptRoots: 10 } });
      const unstamped = async () =>
        (await scan(local, tableName)).filter((item) => ownerOf(item) && !item.expiresAt).length;

      // Act
      const counts: number[] = [await unstamped()];
      for (let run = 0; run < 30 && counts.at(-1); run++) {
        await small.deleteFinishedJobs(0);
        counts.push(await unstamped());
      }

      // Assess: each run stamped at most 10 items, and the runs together all of them.
      expect(counts[0]).toBeGreaterThan(CHILDREN);
      expect(counts.at(-1)).toBe(0);
      for (let n = 1; n < counts.length; n++)
        expect((counts[n - 1] ?? 0) - (counts[n] ?? 0)).toBeLessThanOrEqual(10);
      const head = (await scan(local, tableName)).find((item) => key(item) === `JOB#${rootId}/J`);
      expect(head?.gsi2pk).toBeUndefined();
    },
    TIMEOUT,
  );

  it(
    'moves a retried tree’s items to the expiry of its new end, the next time it is stamped',
    async () => {
      // Prepare: a tree that failed (one child's error), stamped
      const { local, tableName } = await freshTable();
      const store = new DynamoDbStore({
        client: local.client,
        tableName,
        retentionSeconds: RETENTION_SECONDS,
      });
      const { world, rootId } = await treeWorld(store);
      let failed = false;
      for (let requests = world.take(); requests.length; requests = world.take()) {
        for (const request of requests) {
          world.now += 10;
          if (!failed && request.step === 'work') {
            failed = true;
            await world.reply(request, { error: 'bad item' }, { type: 'error', retryable: false });
          } else await world.reply(request);
        }
      }
      const firstEnd = await world.job(rootId);
      await store.deleteFinishedJobs(0);

      // Act: a day later the tree is retried, completes, and is stamped again
      world.now += 86_400_000;
      await world.manager.retry(rootId);
      await world.manager.drain();
      await answerAll(world);
      const secondEnd = await world.job(rootId);
      await store.deleteFinishedJobs(0);

      // Assess
      expect(firstEnd.status).toBe('failed');
      expect(secondEnd.status).toBe('completed');
      expect(endOf(secondEnd)).toBeGreaterThan(endOf(firstEnd));
      const children = (await store.listChildren(rootId, 'each', { limit: 1_000 })).children;
      const tree = new Set([rootId, ...children.map((child) => child.id)]);
      const items = (await scan(local, tableName)).filter((item) => tree.has(ownerOf(item) ?? ''));
      expect(items.length).toBeGreaterThan(CHILDREN);
      expect(items.filter((item) => expiry(item) !== endOf(secondEnd)).map(key)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'loads trees finished by code before TTL retention, and sweeps them whole, a bounded number of roots a run',
    async () => {
      // Prepare: two trees finished as today's main wrote them (no `tt`; heads' TTL two days past retention)
      const { local, tableName } = await freshTable();
      const older = new DynamoDbStore({ client: local.client, tableName });
      const roots: string[] = [];
      for (let n = 0; n < 2; n++) {
        const world = new SimulatedWorld(older);
        await world.register(TREE);
        roots.push(await world.start('tree', { items: [{ n: 0 }, { n: 1 }, { n: 2 }] }));
        await answerAll(world);
      }
      for (const item of await scan(local, tableName)) {
        if (item.sk?.S !== 'J' || !item.ea?.N) continue;
        await local.client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: { pk: item.pk as AttributeValue, sk: item.sk },
            UpdateExpression: 'SET expiresAt = :at',
            ExpressionAttributeValues: {
              ':at': { N: String(Math.ceil(Number(item.ea.N) / 1_000) + RETENTION_SECONDS + 2 * 86_400) },
            },
          }),
        );
      }
      const store = new DynamoDbStore({
        client: local.client,
        tableName,
        retentionSeconds: RETENTION_SECONDS,
        sweepLimits: { stampWrites: 1_000, sweptRoots: 2 },
      });
      const jobsBefore = (await scan(local, tableName)).filter((item) => item.sk?.S === 'J').length;

      // Act
      const loaded = await Promise.all(roots.map((id) => store.getJob(id)));
      const first = await store.deleteFinishedJobs(Date.now());
      const second = await store.deleteFinishedJobs(Date.now());
      const third = await store.deleteFinishedJobs(Date.now());

      // Assess: each root's tree is 4 jobs; the called jobs are roots of their own.
      expect(loaded.map((job) => job?.status)).toEqual(['completed', 'completed']);
      expect(jobsBefore).toBe(10);
      expect(first).toBeLessThan(10);
      expect(first + second).toBe(10);
      expect(third).toBe(0);
      const left = (await scan(local, tableName)).filter((item) => /^(JOB|KIDS|FAN)#/.test(item.pk?.S ?? ''));
      expect(left.map(key)).toEqual([]);
    },
    TIMEOUT,
  );
});
