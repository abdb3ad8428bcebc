import {
  type Bus,
  compileWorkflow,
  type InboundReply,
  type JsonObject,
  loadWorkflows,
  type StepRequest,
  type Store,
  type Timer,
  type TimerScheduler,
  timerId,
  type WorkflowDefinition,
} from '../../engine/index.js';
import { MemoryStore } from '../../functions/adapters/memory/store.js';
import { Manager } from '../../functions/manager/manager.js';
import type { Telemetry } from '../../functions/telemetry/telemetry.js';

export const T0 = Date.UTC(2026, 0, 1);

/** Parses workflow YAML that the test knows to be valid. */
export function workflowsFrom(yaml: string): WorkflowDefinition[] {
  const { workflows, errors } = loadWorkflows(yaml);
  if (errors.length) throw new Error(`invalid test workflow: ${JSON.stringify(errors)}`);
  return workflows;
}

export function compiled(yaml: string, version = 1) {
  return compileWorkflow(workflowsFrom(yaml)[0] as WorkflowDefinition, version);
}

/**
 * A manager on a store with a bus that keeps what it is sent and timers that fire when the test moves
 * the clock: the whole system, deterministic, for engine and manager tests.
 */
export class SimulatedWorld {
  now = T0;
  readonly sent: StepRequest[] = [];
  readonly timers = new Map<string, Timer>();
  readonly bus: Bus;
  readonly manager: Manager;
  private cursor = 0;

  constructor(
    readonly store: Store = new MemoryStore(),
    telemetry?: Telemetry,
    /** The ids of jobs started without one. @default crypto.randomUUID */
    newId?: () => string,
    /** Children a fan-out creates per transition. @default the engine's */
    fanOutSlice?: number,
    /** The most jobs a tree may hold under its root. @default the engine's */
    maxTreeJobs?: number,
  ) {
    const bus: Bus = {
      send: async (requests) => {
        this.sent.push(...requests);
      },
      ensureQueues: async () => {},
      ping: async () => {},
      close: async () => {},
    };
    const scheduler: TimerScheduler = {
      arm: async (timers) => {
        for (const timer of timers) this.timers.set(timerId(timer), timer);
      },
      disarm: async (keys) => {
        for (const key of keys) this.timers.delete(timerId(key));
      },
    };
    this.bus = bus;
    this.manager = new Manager({
      store,
      bus,
      timers: scheduler,
      clock: () => this.now,
      telemetry,
      fanOutSlice,
      maxTreeJobs,
      ...(newId ? { newId } : {}),
    });
  }

  async register(yaml: string): Promise<void> {
    for (const workflow of workflowsFrom(yaml)) await this.manager.registerWorkflow(workflow);
  }

  async start(workflow: string, input: JsonObject = {}, id?: string): Promise<string> {
    const { job } = await this.manager.startJob({ workflow, input, id });
    await this.manager.drain();
    return job.id;
  }

  /** Requests sent since the last call. */
  take(): StepRequest[] {
    const fresh = this.sent.slice(this.cursor);
    this.cursor = this.sent.length;
    return fresh;
  }

  async reply(
    request: StepRequest,
    output: JsonObject | string = request.body,
    extra: Partial<InboundReply> = {},
  ): Promise<void> {
    await this.deliver([
      {
        correlationId: request.correlationId,
        body: typeof output === 'string' ? output : JSON.stringify(output),
        ...extra,
      },
    ]);
  }

  async deliver(replies: InboundReply[]): Promise<void> {
    await this.manager.handleReplies(replies);
    await this.manager.drain();
  }

  /** Moves the clock and fires the timers that came due, earliest first. */
  async advance(ms: number): Promise<void> {
    this.now += ms;
    for (;;) {
      const due = [...this.timers.values()]
        .filter((timer) => timer.at <= this.now)
        .sort((a, b) => a.at - b.at);
      if (!due.length) return;
      for (const timer of due) this.timers.delete(timerId(timer));
      await this.manager.fireTimers(due);
      await this.manager.drain();
    }
  }

  async job(id: string) {
    const job = await this.store.getJob(id);
    if (!job) throw new Error(`no job ${id}`);
    return job;
  }
}
