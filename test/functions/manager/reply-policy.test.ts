import { describe, expect, it } from 'vitest';
import type { InboundReply, ReplyDelivery, ReplyOutcome } from '../../../engine/index.js';
import {
  HandBackTries,
  MAX_CRASHES_IN_HAND,
  MAX_UNSTORABLE_TRIES,
  MIN_HAND_BACK_MS,
  poisonedReason,
  type RepliesManager,
  ReplyPolicy,
  replyKey,
  wholeBatchVerdict,
} from '../../../functions/manager/reply-policy.js';
import { failingStore, type MemoryManager, memoryManager } from '../../support/memory-manager.js';

const workflow = {
  name: 'greet',
  steps: [
    { name: 'hello', retries: 2 },
    { name: 'bye', depends: ['hello'] },
  ],
};

/** A reply whose handling kills the process: the manager never comes back from it. */
const KILLER = '{"explode": true}';

async function startedJobs(harness: MemoryManager, count: number): Promise<string[]> {
  await harness.manager.registerWorkflow(workflow);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push((await harness.manager.startJob({ workflow: 'greet' })).job.id);
  await harness.manager.drain();
  return ids;
}

const reply = (jobId: string, body = '{"n": 1}'): InboundReply => ({
  correlationId: `${jobId}:hello`,
  body,
  attempt: 1,
});
const fresh = (inbound: InboundReply): ReplyDelivery => ({ reply: inbound, redelivered: false });
const again = (inbound: InboundReply): ReplyDelivery => ({ reply: inbound, redelivered: true });

/**
 * One run of the manager process: its policy, with its own holder, on the harness's store. A reply
 * in `dies` (or the killer reply) never comes back from the manager, as if the process died with it
 * in hand: the test lets go of that run and starts another on the same store.
 */
function aProcess(
  harness: MemoryManager,
  name: string,
  dies: (reply: InboundReply) => boolean = () => false,
) {
  const manager: RepliesManager = {
    handleReplies: (replies) =>
      replies.some((r) => r.body === KILLER || dies(r))
        ? new Promise<void>(() => {})
        : harness.manager.handleReplies(replies),
    failPoisonedReply: (...args) => harness.manager.failPoisonedReply(...args),
    deadLettered: (...args) => harness.manager.deadLettered(...args),
  };
  return new ReplyPolicy({
    manager,
    journal: harness.store,
    holder: name,
    logger: harness.telemetry.logger,
    metrics: harness.telemetry.metrics,
    clock: () => harness.now.value,
  });
}

/** Starts handling and gives it time to reach the manager; the run is then dead (never awaited). */
async function diesHandling(policy: ReplyPolicy, deliveries: ReplyDelivery[]): Promise<void> {
  void policy.handle(deliveries);
  await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('Class: ReplyPolicy', () => {
  describe('Method: handle', () => {
    it('settles first deliveries together and each as done, and the jobs go on', async () => {
      // Prepare
      const harness = memoryManager();
      const [first, second] = (await startedJobs(harness, 2)) as [string, string];

      // Act
      const outcomes = await aProcess(harness, 'p1').handle([fresh(reply(first)), fresh(reply(second))]);
      await harness.manager.drain();

      // Assess
      expect(outcomes).toEqual([{ kind: 'done' }, { kind: 'done' }]);
      expect(harness.bus.sent.filter((r) => r.step === 'bye').map((r) => r.jobId)).toEqual([first, second]);
    });

    it('hands back only the replies nothing can be stored for, and settles the others', async () => {
      // Prepare
      const base = memoryManager();
      const [healthy, broken] = (await startedJobs(base, 2)) as [string, string];
      const store = failingStore(base.store, ['getJobs', 'getJob'], (args) =>
        JSON.stringify(args).includes(broken),
      );
      const harness = memoryManager({ store });

      // Act
      const outcomes = await aProcess(harness, 'p1').handle([fresh(reply(healthy)), fresh(reply(broken))]);

      // Assess
      expect(outcomes).toEqual([
        { kind: 'done' },
        { kind: 'retry', error: expect.objectContaining({ message: expect.stringMatching(/unavailable/) }) },
      ]);
      expect((await base.store.getJob(healthy))?.steps.get(0)?.status).toBe('completed');
      expect((await base.store.getJob(broken))?.steps.get(0)?.status).toBe('running');
    });

    it('notes a redelivered reply in the journal before handing it to the manager, and removes the note once settled', async () => {
      // Prepare
      const harness = memoryManager();
      const [job] = (await startedJobs(harness, 1)) as [string];
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const policy = new ReplyPolicy({
        manager: {
          handleReplies: async (replies) => {
            await held;
            await harness.manager.handleReplies(replies);
          },
          failPoisonedReply: (...args) => harness.manager.failPoisonedReply(...args),
          deadLettered: (...args) => harness.manager.deadLettered(...args),
        },
        journal: harness.store,
        holder: 'p1',
        logger: harness.telemetry.logger,
        metrics: harness.telemetry.metrics,
      });
      const redelivered = again(reply(job));
      const key = replyKey(redelivered.reply);

      // Act
      const handling = policy.handle([redelivered]);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const deathsWhileInHand = await harness.store.holdReply(key, 'observer', harness.now.value, false);
      await harness.store.releaseReply(key, 'observer');
      await harness.store.holdReply(key, 'p1', harness.now.value, true);
      release();
      const outcomes = await handling;

      // Assess
      expect(deathsWhileInHand).toEqual({ alone: 1, amongOthers: false });
      expect(outcomes).toEqual([{ kind: 'done' }]);
      expect(await harness.store.holdReply(key, 'observer', harness.now.value, false)).toEqual({
        alone: 0,
        amongOthers: false,
      });
    });

    it(`poisons a reply in hand, alone, at ${MAX_CRASHES_IN_HAND} deaths of its holder: its attempt fails without retry, naming why, and it is never applied`, async () => {
      // Prepare
      const harness = memoryManager();
      const [job, other] = (await startedJobs(harness, 2)) as [string, string];
      const killer = reply(job, KILLER);

      // Act: the batch it came in dies; then it dies alone, twice; the next run finds it out.
      await diesHandling(aProcess(harness, 'run-1'), [fresh(killer), fresh(reply(other))]);
      await diesHandling(aProcess(harness, 'run-2'), [again(killer)]);
      await diesHandling(aProcess(harness, 'run-3'), [again(killer)]);
      const outcomes = await aProcess(harness, 'run-4').handle([again(killer), again(reply(other))]);

      // Assess
      expect(outcomes).toEqual([
        { kind: 'poisoned', reason: poisonedReason(MAX_CRASHES_IN_HAND) },
        { kind: 'done' },
      ]);
      const failed = await harness.store.getJob(job);
      expect(failed).toMatchObject({ status: 'failed', error: { step: 'hello', attempt: 1 } });
      expect(failed?.error?.message).toBe(poisonedReason(MAX_CRASHES_IN_HAND));
      expect(failed?.steps.get(0)?.attempts).toBe(1);
      expect((await harness.store.getJob(other))?.steps.get(0)?.status).toBe('completed');
      expect(harness.telemetry.counted('replies_poisoned_total')).toBe(1);
      expect(
        harness.telemetry.logged('reply poisoned: the manager died with it in hand; its attempt fails'),
      ).toHaveLength(1);
    });

    it('suspects every reply of a batch given again that died, then finds the one that kills alone; the others go through', async () => {
      // Prepare
      const harness = memoryManager();
      const [job, first, second] = (await startedJobs(harness, 3)) as [string, string, string];
      const killer = reply(job, KILLER);
      const batch = () => [again(killer), again(reply(first)), again(reply(second))];

      // Act: its first batch dies, then the batch it comes back with; alone, it dies twice more.
      await diesHandling(aProcess(harness, 'run-1'), [
        fresh(killer),
        fresh(reply(first)),
        fresh(reply(second)),
      ]);
      for (const run of ['run-2', 'run-3', 'run-4']) await diesHandling(aProcess(harness, run), batch());
      const outcomes = await aProcess(harness, 'run-5').handle(batch());

      // Assess
      expect(outcomes).toEqual([
        { kind: 'poisoned', reason: poisonedReason(MAX_CRASHES_IN_HAND) },
        { kind: 'done' },
        { kind: 'done' },
      ]);
      expect((await harness.store.getJob(job))?.status).toBe('failed');
      for (const id of [first, second])
        expect((await harness.store.getJob(id))?.steps.get(0)?.status).toBe('completed');
    });

    it('does not poison an innocent reply that was in hand at an unrelated death, nor at one more while it was alone', async () => {
      // Prepare
      const harness = memoryManager();
      const [innocent, culprit] = (await startedJobs(harness, 2)) as [string, string];
      const killer = reply(culprit, KILLER);
      const bystander = reply(innocent);

      // Act: a batch with both dies; an unrelated SIGKILL strikes while the innocent one is alone.
      await diesHandling(aProcess(harness, 'run-1'), [fresh(bystander), fresh(killer)]);
      await diesHandling(
        aProcess(harness, 'run-2', (r) => r === bystander),
        [again(bystander)],
      );
      const outcomes = await aProcess(harness, 'run-3').handle([again(bystander)]);

      // Assess
      expect(outcomes).toEqual([{ kind: 'done' }]);
      expect((await harness.store.getJob(innocent))?.steps.get(0)?.status).toBe('completed');
      expect(harness.telemetry.counted('replies_poisoned_total')).toBe(0);
    });

    it('hands a poisonous reply back, unrecorded, while its failed attempt cannot be stored', async () => {
      // Prepare
      const base = memoryManager();
      const [job] = (await startedJobs(base, 1)) as [string];
      const killer = reply(job, KILLER);
      for (const run of ['run-1', 'run-2']) await diesHandling(aProcess(base, run), [again(killer)]);
      const store = failingStore(base.store, ['getJobs']);
      const harness = memoryManager({ store });

      // Act
      const during = await aProcess(harness, 'run-3').handle([again(killer)]);
      store.outage = false;
      const after = await aProcess(harness, 'run-3').handle([again(killer)]);

      // Assess
      expect(during).toEqual([{ kind: 'retry', error: expect.any(Error) }]);
      expect(after).toEqual([{ kind: 'poisoned', reason: poisonedReason(MAX_CRASHES_IN_HAND) }]);
      expect((await base.store.getJob(job))?.status).toBe('failed');
    });

    it('fails the attempt of a reply that fails on its last try, naming why it was parked', async () => {
      // Prepare
      const harness = memoryManager();
      const [job] = (await startedJobs(harness, 1)) as [string];
      const policy = new ReplyPolicy({
        manager: {
          handleReplies: async () => {
            throw new Error('the store refused it');
          },
          failPoisonedReply: (...args) => harness.manager.failPoisonedReply(...args),
          deadLettered: (...args) => harness.manager.deadLettered(...args),
        },
        journal: harness.store,
        holder: 'p1',
        logger: harness.telemetry.logger,
        metrics: harness.telemetry.metrics,
      });
      const lastTry: ReplyDelivery = { ...fresh(reply(job)), lastTry: 'no room' };

      // Act
      const outcomes = await policy.handle([lastTry]);

      // Assess
      expect(outcomes).toEqual([{ kind: 'done' }]);
      expect((await harness.store.getJob(job))?.steps.get(0)).toMatchObject({
        status: 'running',
        attempts: 2,
        error: 'the reply could not be handled and was parked (no room)',
      });
    });
  });
});

describe('wholeBatchVerdict (an intake that hands back only whole batches)', () => {
  const deliveries = [fresh(reply('a')), fresh(reply('b'))];
  const retry: ReplyOutcome = { kind: 'retry', error: new Error('down') };

  it('lets the failed replies go at once when others of the batch went through', () => {
    expect(wholeBatchVerdict(deliveries, [{ kind: 'done' }, retry], new HandBackTries())).toBe('letGo');
  });

  it(`hands the batch back while nothing went through, until each reply failed ${MAX_UNSTORABLE_TRIES} times over ${MIN_HAND_BACK_MS / 60_000} minutes`, () => {
    const clock = { now: 0 };
    const tries = new HandBackTries(() => clock.now);
    const verdicts: string[] = [];
    for (let n = 0; n < MAX_UNSTORABLE_TRIES; n++) {
      clock.now = (n * MIN_HAND_BACK_MS) / (MAX_UNSTORABLE_TRIES - 1);
      verdicts.push(wholeBatchVerdict(deliveries, [retry, retry], tries));
    }
    expect(verdicts).toEqual([...new Array(MAX_UNSTORABLE_TRIES - 1).fill('handBack'), 'letGo']);
    expect(tries.size).toBe(0);
  });

  it('has nothing to say of a batch where nothing failed', () => {
    expect(
      wholeBatchVerdict(
        deliveries,
        [{ kind: 'done' }, { kind: 'poisoned', reason: 'x' }],
        new HandBackTries(),
      ),
    ).toBe('none');
  });
});
