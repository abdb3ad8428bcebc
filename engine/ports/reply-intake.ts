import type { InboundReply } from './bus.js';

/** One reply as a reply intake hands it over: the reply, and whether the broker gave it out before. */
export interface ReplyDelivery {
  reply: InboundReply;
  /**
   * The broker handed this message out before and it was not acknowledged: it was handed back, its
   * connection dropped, or its holder died with it in hand. RabbitMQ's and Amazon MQ's `redelivered`,
   * SQS's `ApproximateReceiveCount` above 1. A reply delivered for the first time cannot have made
   * anything crash.
   */
  redelivered: boolean;
  /**
   * This is the reply's last try, for this reason (Amazon MQ's parked queue, where a reply that could
   * not be handled waits for one more): if it fails again, its attempt fails instead of it coming back.
   */
  lastTry?: string;
}

/** What becomes of one delivered reply: the manager decides, the intake carries it out. */
export type ReplyOutcome =
  /** Its effects are stored, or it was dropped as unreadable: acknowledge it. */
  | { kind: 'done' }
  /** Nothing could be stored for it (the store may be down): deliver it again later. */
  | { kind: 'retry'; error: unknown }
  /**
   * It is poisonous and its attempt has failed, naming why: acknowledge it and keep it where an
   * operator can see it and deliver it again (the intake's poison queue), with `reason`.
   */
  | { kind: 'poisoned'; reason: string };

/** The manager's side of an intake: a batch of deliveries in, one outcome per delivery out, in order. */
export type ReplyHandler = (deliveries: readonly ReplyDelivery[]) => Promise<ReplyOutcome[]>;

export interface ReplyIntakeOptions {
  /** The vhost whose reply queue to consume; `null` or absent: the broker URL's own. */
  vhost?: string | null;
  /** Stop for good, rather than try again, when the broker refuses the login or the vhost. */
  stopWhenRefused?: boolean;
  /** Called when the intake stops for good (a refusal, or another manager consuming the queue). */
  onFatal?: (error: Error) => void;
}

export interface ReplyConsumption {
  /** Stops taking replies, lets the batch in hand finish, and lets go of the connection. */
  stop(): Promise<void>;
}

/**
 * Where a long-running host (`switchyard serve`) takes its replies from: the bus's reply queue.
 * The Lambda handlers are invoked with their batches instead, and settle them the same way
 * (functions/handlers/replies-sqs.ts, replies-mq.ts).
 */
export interface ReplyIntake {
  /**
   * Consumes the reply queue, hands its replies to `handle` in batches, and carries out each
   * outcome: acknowledges `done`, delivers `retry` again after a backoff, and moves `poisoned` to
   * its poison queue before acknowledging it. Resolves once it is consuming.
   */
  consumeReplies(handle: ReplyHandler, options?: ReplyIntakeOptions): Promise<ReplyConsumption>;
}

/** What a bus's broker says of a request it took back (it expired, or was rejected too often). */
export interface DeadLetterHandlers {
  /**
   * The request expired in its queue: sent again if its attempt is still awaited. `token`: the one
   * the request carried (x-switchyard-token), which reply authentication checks.
   */
  expired(correlationId: string, attempt: number | undefined, token?: string): Promise<void>;
  /** The broker gave up on the request (a delivery limit, a rejection): its attempt fails with `detail`. */
  rejected(correlationId: string, attempt: number | undefined, detail: string, token?: string): Promise<void>;
}

/** A bus whose broker hands the manager back the requests it gave up on (RabbitMQ's dead-letter queue). */
export interface DeadLetterIntake {
  consumeDeadLetters(handlers: DeadLetterHandlers, options?: ReplyIntakeOptions): Promise<ReplyConsumption>;
}

/**
 * The crash journal: which replies were in hand when the process (or Lambda container) holding them
 * died. A reply delivered again is noted before it is handled, alone or among others, and let go of
 * once it is settled; a note still held by another holder when the reply is taken again is a holder
 * that died with it in hand. A Store role.
 */
export interface RepliesInHand {
  /**
   * Notes that `holder` has the reply `key` in hand since `now`, `alone` or among other replies,
   * and returns the deaths of the holders that had it before (`heldReplyNote` counts them).
   */
  holdReply(key: string, holder: string, now: number, alone: boolean): Promise<ReplyDeaths>;
  /**
   * `holder` lets go of the reply: its note goes, or with `keep` (a reply handed back) stays with its
   * deaths and no holder, so that taking it again counts none. Nothing happens when another holder
   * has taken it since.
   */
  releaseReply(key: string, holder: string, keep?: boolean): Promise<void>;
}

/** The deaths of the holders that had a reply in hand. */
export interface ReplyDeaths {
  /** Holders that died with it alone in hand: the death was the reply's. */
  alone: number;
  /** A holder died with it in hand among other replies: any of them may have been the cause. */
  amongOthers: boolean;
}

/** What a store keeps of one reply in hand. */
export interface HeldReplyNote extends ReplyDeaths {
  /** Who has it in hand; empty once let go of with `keep`. */
  holder: string;
  /** `holder` has it alone in hand. */
  heldAlone: boolean;
  /** When `holder` took it (ms). */
  since: number;
}

/**
 * The note `holdReply` writes over `previous`: a note still held by another holder is a death, of
 * the reply's own when that holder had it alone; one let go of, or held by the same holder, is none.
 * Every store counts with this.
 */
export function heldReplyNote(
  previous: HeldReplyNote | undefined,
  holder: string,
  now: number,
  alone: boolean,
): HeldReplyNote {
  const died = previous !== undefined && previous.holder !== '' && previous.holder !== holder;
  return {
    holder,
    heldAlone: alone,
    alone: (previous?.alone ?? 0) + (died && previous.heldAlone ? 1 : 0),
    amongOthers: (previous?.amongOthers ?? false) || (died && !previous.heldAlone),
    since: now,
  };
}
