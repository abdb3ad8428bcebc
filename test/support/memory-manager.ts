import type {
  Bus,
  Commit,
  InboundReply,
  SendOptions,
  StepRequest,
  Store,
  Timer,
  TimerKey,
  TimerScheduler,
} from '../../engine/index.js';
import { MemoryStore } from '../../functions/adapters/memory/store.js';
import { Manager } from '../../functions/manager/manager.js';
import type { QueueRules } from '../../functions/manager/queue-rules.js';
import { type RecordingTelemetry, recordingTelemetry } from './recording-telemetry.js';

/** A bus that keeps what it is asked to send. */
export class RecordingBus implements Bus {
  readonly sent: StepRequest[] = [];
  /** The token each request was sent with, by correlation id (the latest). */
  readonly tokens = new Map<string, string>();
  readonly ensured: { queue: string; vhost: string | null }[] = [];

  async send(requests: readonly StepRequest[], options: SendOptions = {}): Promise<void> {
    this.sent.push(...requests);
    if (options.tokenOf)
      for (const request of requests) this.tokens.set(request.correlationId, options.tokenOf(request));
  }

  async ensureQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<void> {
    this.ensured.push(...queues);
  }

  async ping(): Promise<void> {}
  async close(): Promise<void> {}
}

/** Timers that keep what they are asked to arm and send again. */
export class RecordingTimers implements TimerScheduler {
  readonly armed: Timer[] = [];
  readonly resent: Timer[] = [];
  failResend = false;

  async arm(timers: readonly Timer[]): Promise<void> {
    this.armed.push(...timers);
  }

  async disarm(_keys: readonly TimerKey[]): Promise<void> {}

  async resend(timers: readonly Timer[]): Promise<void> {
    if (this.failResend) throw new Error('SQS is unavailable');
    this.resent.push(...timers);
  }
}

export interface MemoryManager {
  manager: Manager;
  store: Store;
  bus: RecordingBus;
  timers: RecordingTimers;
  telemetry: RecordingTelemetry;
  now: { value: number };
}

/** A manager on the in-memory store, a recording bus and recording timers, with a clock the test moves. */
export function memoryManager(
  options: {
    store?: Store;
    start?: number;
    queueRules?: QueueRules;
    replyAuth?: boolean;
    requestTtlMs?: number;
  } = {},
): MemoryManager {
  const now = { value: options.start ?? Date.parse('2026-01-01T00:00:00Z') };
  const store = options.store ?? new MemoryStore();
  const bus = new RecordingBus();
  const timers = new RecordingTimers();
  const telemetry = recordingTelemetry();
  const manager = new Manager({
    store,
    bus,
    timers,
    telemetry,
    clock: () => now.value,
    queueRules: options.queueRules,
    replyAuth: options.replyAuth,
    requestTtlMs: options.requestTtlMs,
  });
  return { manager, store, bus, timers, telemetry, now };
}

/**
 * The store, except that the methods `failing` names throw while `when` says so: an outage, for the
 * paths that must hand a message back.
 */
export function failingStore(
  inner: Store,
  failing: readonly (keyof Store)[],
  when: (args: unknown[]) => boolean = () => true,
): Store & { outage: boolean } {
  const state = { outage: true };
  return new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'outage') return state.outage;
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (state.outage && failing.includes(property as keyof Store) && when(args)) {
          return Promise.reject(new Error(`the store is unavailable (${String(property)})`));
        }
        return value.apply(target, args);
      };
    },
    set(target, property, value) {
      if (property === 'outage') {
        state.outage = value;
        return true;
      }
      return Reflect.set(target, property, value);
    },
  }) as Store & { outage: boolean };
}

/**
 * The store, except that it cannot write a job whose record holds the text `poison` (as a record
 * too deep to serialise could not be), nor any job `refused` names: a store that answers, but not for
 * these.
 */
export function storeRefusing(inner: Store, refused: Set<string>): Store {
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'commit') return typeof value === 'function' ? value.bind(target) : value;
      return async (commits: readonly Commit[]) => {
        for (const commit of commits) {
          if (refused.has(commit.job.id)) throw new Error(`job ${commit.job.id} cannot be written`);
          if (JSON.stringify(commit.job).includes('poison'))
            throw new RangeError('Maximum call stack size exceeded');
        }
        return target.commit(commits);
      };
    },
  });
}

/**
 * The manager, except that handling a reply `kills` picks never comes back: the process or Lambda
 * container handling it died there (out of memory, out of time). The test lets go of what called it.
 */
export function managerDyingOn(manager: Manager, kills: (reply: InboundReply) => boolean): Manager {
  return new Proxy(manager, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'handleReplies') return typeof value === 'function' ? value.bind(target) : value;
      return (replies: readonly InboundReply[]) =>
        replies.some(kills) ? new Promise<void>(() => {}) : target.handleReplies(replies);
    },
  });
}
