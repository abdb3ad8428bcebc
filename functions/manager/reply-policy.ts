import { createHash } from 'node:crypto';
import type {
  InboundReply,
  RepliesInHand,
  ReplyDeaths,
  ReplyDelivery,
  ReplyHandler,
  ReplyOutcome,
} from '../../engine/index.js';
import type { Logger, Metrics } from '../telemetry/telemetry.js';

/*
 * The poison-reply policy: what a poisonous reply is, how often a reply is tried, where it ends up and
 * what is recorded. Every intake takes it from here (serve's RabbitMQ consumer and in-process bus,
 * the SQS and Amazon MQ replies handlers), and so does the manager's own isolation of a batch
 * (isolate-replies.ts).
 *
 * A reply is poisonous when
 * 1. applied alone, its event throws: its attempt fails with the reason ("the reply could not be
 *    stored: …"), as the step's retries say, and the reply is acknowledged (isolate-replies.ts);
 * 2. not even that failed attempt can be stored while the store works: the reply is let go of,
 *    logged and counted (`replies_dropped_total`);
 * 3. it was in hand, alone, when the process or Lambda container handling it died
 *    `MAX_CRASHES_IN_HAND` times: it is not applied again. Its attempt fails, not to be retried (a
 *    retry would bring the same reply back), naming why; it is counted (`replies_poisoned_total`) and
 *    moved to the intake's poison queue, where an operator can read it and deliver it again:
 *    serve's `<reply queue>.poisoned` (RabbitMQ, on the vhost it came from; or the in-process bus),
 *    Amazon MQ's `workflow-manager.poisoned`, SQS's reply dead-letter queue.
 *
 * A reply nothing can be stored for while the store is down is not poisonous: it is handed back and
 * comes again, and so does one whose note in the journal cannot be written. An intake that can hand
 * back only whole batches (Amazon MQ) does so until each reply of the batch has failed
 * `MAX_UNSTORABLE_TRIES` times over `MIN_HAND_BACK_MS` (`wholeBatchVerdict`).
 *
 * How a crash is recognised: a reply delivered for the first time is handled with its batch and
 * noted nowhere. One the broker delivers again (handed back, a lost connection, a duplicate, a
 * crash) is noted in the store's journal of replies in hand (`RepliesInHand`) before it is handled,
 * until it is settled. A note still held by a holder that is gone is a death with that reply in hand:
 * the reply's own when it was alone in hand, perhaps another's when it was among others. A reply with
 * such a past is handled alone from then on, and one whose own deaths reach `MAX_CRASHES_IN_HAND` is
 * poisonous; one with a clean past (an SQS duplicate, a reconnect) goes with the batch, at the cost of
 * a note. So an unrelated SIGKILL costs an innocent reply only being handled alone; it would have to
 * strike twice more, each time exactly while that reply is alone in hand, to make it poisonous. A
 * poisonous reply kills the batch it came in first and, unless it comes back alone, the batch it
 * comes back with: the process dies `MAX_CRASHES_IN_HAND + 1` or `+ 2` times before it stays up.
 */

/**
 * A reply that nothing could be stored for is let go of only after this many tries in a row, and
 * `MIN_HAND_BACK_MS` since its first: a store that takes no write for a while (a full disk,
 * throttling) must cost no reply, while one reply the store can never take must not come back for ever.
 */
export const MAX_UNSTORABLE_TRIES = 10;
export const MIN_HAND_BACK_MS = 10 * 60_000;
/** Deaths of its holders with a reply alone in hand after which the reply is poisonous (see above). */
export const MAX_CRASHES_IN_HAND = 2;
/** Replies whose failed tries are remembered; the oldest is forgotten first. */
const REMEMBERED = 1000;
/** An error's text in a recorded reason is cut to this many characters. */
export const MAX_REASON = 1000;

const DONE: ReplyOutcome = { kind: 'done' };

/** Names a reply across its deliveries: the digest of everything the manager reads of it. */
export function replyKey(reply: InboundReply): string {
  return createHash('sha256')
    .update(JSON.stringify([reply.correlationId, reply.type, reply.attempt, reply.retryable]))
    .update('\u0000')
    .update(reply.body)
    .digest('base64url');
}

/** Why a poisonous reply's attempt failed, as the job shows it (`crashes`: its own deaths). */
export function poisonedReason(crashes: number): string {
  return (
    `the reply was in hand, alone, when the manager died ${crashes} times (a crash, or out of ` +
    'memory or time): it is not applied, and is kept in the poison queue'
  );
}

/** Counts the failed tries of each reply in a row (in this process), to bound how often it is handed back. */
export class HandBackTries {
  private readonly tries = new Map<string, { count: number; since: number }>();

  constructor(private readonly clock: () => number = Date.now) {}

  /** Counts one more failed try of `key`; whether it has now had its share. */
  failed(key: string): boolean {
    const now = this.clock();
    const earlier = this.tries.get(key);
    const tries = { count: (earlier?.count ?? 0) + 1, since: earlier?.since ?? now };
    this.tries.delete(key);
    if (tries.count >= MAX_UNSTORABLE_TRIES && now - tries.since >= MIN_HAND_BACK_MS) return true;
    this.tries.set(key, tries);
    if (this.tries.size > REMEMBERED) this.tries.delete(this.tries.keys().next().value as string);
    return false;
  }

  forget(key: string): void {
    this.tries.delete(key);
  }

  get size(): number {
    return this.tries.size;
  }
}

/**
 * For an intake that hands back only whole batches (Amazon MQ's event source mapping): `handBack`
 * while nothing of the batch went through and some reply that failed has not yet had its share of
 * tries (`MAX_UNSTORABLE_TRIES` over `MIN_HAND_BACK_MS`); otherwise `letGo` the failed ones (the
 * store works, or they had their share), and `none` when nothing failed.
 */
export function wholeBatchVerdict(
  deliveries: readonly ReplyDelivery[],
  outcomes: readonly ReplyOutcome[],
  tries: HandBackTries,
): 'none' | 'handBack' | 'letGo' {
  const failed = deliveries.filter((_, index) => outcomes[index]?.kind === 'retry');
  if (failed.length === 0) return 'none';
  const storeWorks = failed.length < deliveries.length;
  const exhausted = failed.map((delivery) => tries.failed(replyKey(delivery.reply)));
  if (!storeWorks && exhausted.some((done) => !done)) return 'handBack';
  for (const delivery of failed) tries.forget(replyKey(delivery.reply));
  return 'letGo';
}

/** What the policy asks of the manager (manager.ts). */
export interface RepliesManager {
  /** Stores the replies' effects; throws when it could not and the replies must come again. */
  handleReplies(replies: readonly InboundReply[]): Promise<void>;
  /** Fails a poisonous reply's attempt, not to be retried, without reading the reply. */
  failPoisonedReply(
    correlationId: string | undefined,
    attempt: number | undefined,
    reason: string,
    token?: string,
  ): Promise<void>;
  /** Fails the attempt of a request, or reply, the broker gave up on (`token`: the one it carried). */
  deadLettered(
    correlationId: string,
    attempt: number | undefined,
    detail: string,
    token?: string,
  ): Promise<void>;
}

export interface ReplyPolicyOptions {
  manager: RepliesManager;
  /** The store's journal of replies in hand. */
  journal: RepliesInHand;
  /** Who holds the replies: unique to this process (serve) or Lambda container. */
  holder: string;
  logger: Logger;
  metrics: Metrics;
  /** @default Date.now */
  clock?: () => number;
}

/**
 * The manager's side of every intake (`ReplyHandler`): settles a batch of deliveries as the policy
 * above says. Deliveries given again are noted in the journal first; those with a clean past go to
 * the manager with the first deliveries, together (one store round), and when that fails one by one,
 * to find those that fail; those a holder died with go one at a time, each noted as alone in hand.
 */
export class ReplyPolicy {
  private readonly clock: () => number;

  constructor(private readonly options: ReplyPolicyOptions) {
    this.clock = options.clock ?? Date.now;
  }

  /** The `ReplyHandler`: one outcome per delivery, in order. */
  readonly handle: ReplyHandler = async (deliveries) => {
    const { journal, holder } = this.options;
    const outcomes: (ReplyOutcome | undefined)[] = new Array(deliveries.length);
    const keys = deliveries.map((delivery) => (delivery.redelivered ? replyKey(delivery.reply) : undefined));
    // Every reply delivered again is noted first, as held among the others: what the note held
    // before says what befell it.
    const deaths = new Map<number, ReplyDeaths>();
    const now = this.clock();
    await Promise.all(
      keys.map(async (key, index) => {
        if (key === undefined) return;
        try {
          deaths.set(index, await journal.holdReply(key, holder, now, false));
        } catch (error) {
          outcomes[index] = { kind: 'retry', error };
        }
      }),
    );
    const poisoned: number[] = [];
    const alone: number[] = [];
    const together: number[] = [];
    for (const index of deliveries.keys()) {
      if (outcomes[index]) continue;
      const before = deaths.get(index);
      if (before && before.alone >= MAX_CRASHES_IN_HAND) poisoned.push(index);
      else if (before && (before.alone > 0 || before.amongOthers)) alone.push(index);
      else together.push(index);
    }
    // A reply delivered again with nothing to share its batch with is alone in hand anyway.
    const [only] = together;
    if (together.length === 1 && only !== undefined && deaths.has(only)) alone.push(...together.splice(0));

    for (const index of poisoned) {
      const before = deaths.get(index) as ReplyDeaths;
      outcomes[index] = await this.poison(deliveries[index] as ReplyDelivery, before.alone);
    }
    const settled = together.length
      ? await this.together(together.map((index) => deliveries[index] as ReplyDelivery))
      : [];
    together.forEach((index, k) => {
      outcomes[index] = settled[k];
    });
    await this.letGo(keys, outcomes);
    for (const index of alone) {
      outcomes[index] = await this.alone(deliveries[index] as ReplyDelivery, keys[index] as string);
    }
    return outcomes as ReplyOutcome[];
  };

  /**
   * Lets go of the notes of the settled replies: a reply handed back keeps its deaths (without a
   * holder), so that when it comes back it is known for what it is. A poisoned reply's note goes with
   * it: delivered again from the poison queue, it is handled as any reply (and found out again,
   * should it kill the manager again).
   */
  private async letGo(
    keys: readonly (string | undefined)[],
    outcomes: readonly (ReplyOutcome | undefined)[],
  ): Promise<void> {
    const { journal, holder, logger } = this.options;
    await Promise.all(
      keys.map(async (key, index) => {
        const outcome = outcomes[index];
        if (key === undefined || outcome === undefined) return;
        await journal
          .releaseReply(key, holder, outcome.kind === 'retry')
          .catch((error: unknown) =>
            logger.warn('a reply in hand could not be let go of in the journal', { error }),
          );
      }),
    );
  }

  /** The batch in one manager call; when that fails, each reply on its own. */
  private async together(deliveries: readonly ReplyDelivery[]): Promise<ReplyOutcome[]> {
    try {
      await this.options.manager.handleReplies(deliveries.map((delivery) => delivery.reply));
      return deliveries.map(() => DONE);
    } catch (error) {
      if (deliveries.length === 1) return [await this.failed(deliveries[0] as ReplyDelivery, error)];
      this.options.logger.warn('reply batch failed; handling its replies one at a time', {
        error,
        size: deliveries.length,
      });
    }
    const outcomes: ReplyOutcome[] = [];
    for (const delivery of deliveries) outcomes.push(await this.once(delivery));
    return outcomes;
  }

  private async once(delivery: ReplyDelivery): Promise<ReplyOutcome> {
    try {
      await this.options.manager.handleReplies([delivery.reply]);
      return DONE;
    } catch (error) {
      return this.failed(delivery, error);
    }
  }

  /**
   * A reply a holder died with before: noted as alone in hand, handled alone, and let go of. Should
   * the process die now, the death is this reply's own.
   */
  private async alone(delivery: ReplyDelivery, key: string): Promise<ReplyOutcome> {
    const { journal, holder } = this.options;
    let outcome: ReplyOutcome;
    try {
      await journal.holdReply(key, holder, this.clock(), true);
      outcome = await this.once(delivery);
    } catch (error) {
      outcome = { kind: 'retry', error };
    }
    await this.letGo([key], [outcome]);
    return outcome;
  }

  /** Fails the poisonous reply's attempt without reading the reply; until that is stored, it is handed back. */
  private async poison(delivery: ReplyDelivery, crashes: number): Promise<ReplyOutcome> {
    const { manager, logger, metrics } = this.options;
    const { correlationId, attempt, token } = delivery.reply;
    const reason = poisonedReason(crashes);
    try {
      await manager.failPoisonedReply(correlationId, attempt, reason, token);
    } catch (error) {
      return { kind: 'retry', error };
    }
    metrics.count('replies_poisoned_total');
    logger.error('reply poisoned: the manager died with it in hand; its attempt fails', {
      correlationId,
      attempt,
      crashes,
    });
    return { kind: 'poisoned', reason };
  }

  /**
   * A reply that failed: handed back, unless this was its last try (`lastTry`, the Amazon MQ parked
   * queue): then its attempt fails, and it is handed back only while that cannot be stored either.
   */
  private async failed(delivery: ReplyDelivery, error: unknown): Promise<ReplyOutcome> {
    const { correlationId, attempt, token } = delivery.reply;
    if (delivery.lastTry === undefined || correlationId === undefined) return { kind: 'retry', error };
    const why = delivery.lastTry || String(error);
    try {
      await this.options.manager.deadLettered(
        correlationId,
        attempt,
        `the reply could not be handled and was parked (${why.slice(0, MAX_REASON)})`,
        token,
      );
      return DONE;
    } catch (failure) {
      return { kind: 'retry', error: failure };
    }
  }
}
