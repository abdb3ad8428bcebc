import {
  type AttributeValue,
  PutItemCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import type { JobRecord } from '../../../../engine/index.js';
import { DynamoDbStore } from '../../../../functions/adapters/dynamodb/store.js';
import {
  createSwitchyardTable,
  type DynamoDbLocal,
  startDynamoDbLocal,
  uniqueTableName,
} from '../../../support/dynamodb-local.js';
import { NESTED_WORKFLOW } from '../../../support/nested-workflow.js';
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
const DAY_MS = 86_400_000;
/** A child's head's horizon: its creation + retention + a day. */
const horizonOf = (child: JobRecord): number =>
  Math.ceil(child.createdAt / 1_000) + RETENTION_SECONDS + DAY_MS / 1_000;

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

/** A fresh table and a store with retention on it (`options` to make more such stores). */
async function retentionStore() {
  const { local, tableName } = await freshTable();
  const options = { client: local.client, tableName, retentionSeconds: RETENTION_SECONDS };
  return { local, tableName, options, store: new DynamoDbStore(options) };
}

/** A fresh table, a store with retention on it, and a tree of which half the children have answered. */
async function halfAnsweredTree() {
  const { local, tableName, options, store } = await retentionStore();
  const { world, rootId } = await treeWorld(store);
  let answered = 0;
  await answerAll(world, () => answered++ >= CHILDREN / 2);
  return { local, tableName, options, world, rootId };
}

describe('DynamoDB retention by TTL', () => {
  it(
    'gives every item of a finished tree (120 children: a commit too big for one transaction; a called job) its root’s end + retention at least, and while it runs only its children’s heads their horizon',
    async () => {
      // Prepare
      const { local, tableName, store } = await retentionStore();
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

      // While the root ran, only its children's heads had a TTL: their horizon, a day past their
      // creation + retention.
      const runningItems = halfway.filter((item) => tree.has(ownerOf(item) ?? ''));
      expect(runningItems.length).toBeGreaterThan(CHILDREN);
      const childHeads = new Map(children.map((child) => [`JOB#${child.id}/J`, horizonOf(child)]));
      const withTtl = runningItems.filter((item) => item.expiresAt);
      expect(withTtl.map(key).sort()).toEqual([...childHeads.keys()].sort());
      expect(withTtl.filter((item) => expiry(item) !== childHeads.get(key(item))).map(key)).toEqual([]);

      // At its end only the root's head (and chunks) carry it; the head waits in gsi2 for the stamp.
      const rootHead = beforeStamp.find((item) => key(item) === `JOB#${rootId}/J`);
      expect(expiry(rootHead ?? {})).toBe(endOf(root));
      expect(rootHead?.gsi2pk?.S).toMatch(/^TTL#/);

      // The sweep stamped the tree and deleted nothing: every item of it expires with the root, but
      // the children's heads, whose horizon lies later (the tree ended within a day), kept it.
      expect(deleted).toBe(0);
      const treeItems = after.filter((item) => tree.has(ownerOf(item) ?? ''));
      expect(treeItems.length).toBe(runningItems.length);
      const kinds = new Set(treeItems.map((item) => `${item.pk?.S?.split('#')[0]}/${item.sk?.S?.[0]}`));
      expect([...kinds].sort()).toEqual(['FAN/0', 'JOB/D', 'JOB/J', 'JOB/K', 'JOB/S', 'KIDS/L', 'KIDS/P']);
      const others = treeItems.filter((item) => !childHeads.has(key(item)));
      expect(others.filter((item) => expiry(item) !== endOf(root)).map(key)).toEqual([]);
      const heads = treeItems.filter((item) => childHeads.has(key(item)));
      expect(heads).toHaveLength(CHILDREN);
      expect(heads.filter((item) => expiry(item) !== childHeads.get(key(item))).map(key)).toEqual([]);
      expect(Math.min(...heads.map((item) => expiry(item) ?? 0))).toBeGreaterThan(endOf(root));
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
    "stamps a tree through its children only: a job its children index also names (a clash's leftover) keeps no expiry, and one naming the root is not walked again",
    async () => {
      // Prepare: a tree that ended; another job, still running; and entries in the tree's children
      // index naming that job and the root itself, as a commit leaves one written before it found a
      // child's id taken.
      const { local, tableName, store } = await retentionStore();
      const { world, rootId } = await treeWorld(store);
      await answerAll(world);
      const otherId = await world.start('callee', {});
      for (const [n, named] of [otherId, rootId].entries())
        await local.client.send(
          new PutItemCommand({
            TableName: tableName,
            Item: {
              pk: { S: `KIDS#${rootId}#each#000000` },
              sk: { S: `P#00000000${n}#leftover0000` },
              ix: { N: String(n) },
              ids: { L: [{ S: named }] },
            },
          }),
        );

      // Act
      await store.deleteFinishedJobs(world.now + RETENTION_SECONDS * 1_000 + 1);
      const after = await scan(local, tableName);

      // Assess: the tree was stamped whole (its root left gsi2), the other job's items were not.
      const root = await world.job(rootId);
      expect(root.status).toBe('completed');
      expect((await world.job(otherId)).status).toBe('running');
      expect(after.find((item) => key(item) === `JOB#${rootId}/J`)?.gsi2pk).toBeUndefined();
      const treeIndex = after.filter((item) => item.pk?.S?.startsWith(`KIDS#${rootId}#`));
      expect(treeIndex.filter((item) => expiry(item) !== endOf(root)).map(key)).toEqual([]);
      const otherItems = after.filter((item) => ownerOf(item) === otherId);
      expect(otherItems.length).toBeGreaterThan(0);
      expect(otherItems.filter((item) => expiry(item) !== undefined).map(key)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'raises the children’s heads of a tree that ended more than a day after it began, over several runs when one run’s budget is smaller than the tree',
    async () => {
      // Prepare: half the children answered, the rest two days later
      const { local, tableName, options, world, rootId } = await halfAnsweredTree();
      world.now += 2 * DAY_MS;
      await answerAll(world);
      const root = await world.job(rootId);
      const small = new DynamoDbStore({ ...options, sweepLimits: { stampWrites: 10, sweptRoots: 10 } });
      const children = (await small.listChildren(rootId, 'each', { limit: 1_000 })).children;
      const tree = new Set([rootId, ...children.map((child) => child.id)]);
      // Items of the tree that would expire before the root.
      const unstamped = async () =>
        (await scan(local, tableName)).filter(
          (item) => tree.has(ownerOf(item) ?? '') && (expiry(item) ?? 0) < endOf(root),
        ).length;

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
    'stamps every level of a nested tree (a task fanning out over a task) that ended two days after it began',
    async () => {
      // Prepare
      const { local, tableName, store } = await retentionStore();
      const world = new SimulatedWorld(store);
      await world.register(NESTED_WORKFLOW);
      const input = {
        groups: [
          [0, 1, 2],
          [3, 4, 5],
          [6, 7, 8],
          [9, 10, 11],
        ],
      };
      const rootId = await world.start('nested', input);
      let answered = 0;
      await answerAll(world, () => answered++ >= 6);
      world.now += 2 * DAY_MS;
      await answerAll(world);
      const root = await world.job(rootId);

      // Act
      await store.deleteFinishedJobs(0);

      // Assess: the root, its 4 children and their 12 children, every item of each at the root's expiry
      const children = (await store.listChildren(rootId, 'outer', { limit: 100 })).children;
      const grandchildren = (
        await Promise.all(
          children.map(
            async (child) => (await store.listChildren(child.id, 'inner', { limit: 100 })).children,
          ),
        )
      ).flat();
      expect(root.status).toBe('completed');
      expect(children).toHaveLength(4);
      expect(grandchildren).toHaveLength(12);
      const tree = new Set([rootId, ...children.map((job) => job.id), ...grandchildren.map((job) => job.id)]);
      const items = (await scan(local, tableName)).filter((item) => tree.has(ownerOf(item) ?? ''));
      const heads = items.filter((item) => item.sk?.S === 'J');
      expect(heads).toHaveLength(17);
      expect(items.filter((item) => expiry(item) !== endOf(root)).map(key)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    'raises the horizon of a tree that runs near it, once, and its children’s later commits keep the raised one',
    async () => {
      // Prepare: a tree whose children have half answered, a store whose clock reads 25 days later
      // (the retention is 30 days: the children's heads would expire in 6 days)
      const { local, tableName, options, world, rootId } = await halfAnsweredTree();
      let clock = world.now + 25 * DAY_MS;
      const sweeper = new DynamoDbStore({ ...options, clock: () => clock });
      const children = (await sweeper.listChildren(rootId, 'each', { limit: 1_000 })).children;
      const heads = new Set(children.map((child) => `JOB#${child.id}/J`));
      const headExpiries = async () =>
        (await scan(local, tableName))
          .filter((item) => heads.has(key(item)))
          .map((item) => expiry(item) ?? 0)
          .sort();
      const before = await headExpiries();

      // Act: a run at 25 days, another an hour later; the other children answered 12 hours later
      const firstRun = clock;
      await sweeper.deleteFinishedJobs(0);
      const raised = await headExpiries();
      const rootHead = (await scan(local, tableName)).find((item) => key(item) === `JOB#${rootId}/J`);
      clock += 3_600_000;
      await sweeper.deleteFinishedJobs(0);
      const again = await headExpiries();
      world.now = clock + DAY_MS / 2;
      await answerAll(world);
      const root = await world.job(rootId);
      clock = world.now + 10 * 60_000;
      await sweeper.deleteFinishedJobs(0);
      const afterEnd = await headExpiries();
      const stampedRoot = (await scan(local, tableName)).find((item) => key(item) === `JOB#${rootId}/J`);

      // Assess
      const raisedTo = Math.ceil(firstRun / 1_000) + RETENTION_SECONDS + DAY_MS / 1_000;
      expect(before).toHaveLength(CHILDREN);
      expect(Math.max(...before)).toBeLessThan(raisedTo - 20 * 86_400);
      expect(raised).toEqual(Array(CHILDREN).fill(raisedTo));
      expect(Number(rootHead?.hz?.N)).toBe(raisedTo - 3_600);
      expect(again).toEqual(raised);
      expect(root.status).toBe('completed');
      // The tree ended within a day of the raise: its end's stamp left the raised heads as they were.
      expect(stampedRoot?.gsi2pk).toBeUndefined();
      expect(raisedTo).toBeGreaterThan(endOf(root));
      expect(afterEnd).toEqual(raised);
    },
    TIMEOUT,
  );

  it(
    'moves a retried tree’s items to the expiry of its new end, the next time it is stamped',
    async () => {
      // Prepare: a tree that failed (one child's error), stamped
      const { local, tableName, store } = await retentionStore();
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
