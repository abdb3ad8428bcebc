import type { JsonObject } from '../../engine/json.js';
import { WorkerError, type WorkerHandler } from '../../functions/worker/index.js';
import { eventually } from './rabbitmq.js';

/** A request a worker has in hand and has not answered yet. */
export interface HeldRequest {
  jobId: string;
  step: string;
  input: JsonObject;
  /** Sends the reply (the worker then acknowledges the request). */
  release(output?: JsonObject): void;
  /** Sends an error reply: the attempt failed. */
  fail(message: string): void;
}

/**
 * A worker handler that answers only when the test says so: each request waits in `held` until a
 * test takes it and calls `release`. The test decides when each reply reaches the manager.
 */
export class HeldRequests {
  private readonly held: HeldRequest[] = [];
  private readonly unreleased = new Set<HeldRequest>();
  private closed = false;

  readonly handler: WorkerHandler = (input, context) =>
    new Promise((resolve, reject) => {
      if (this.closed) return resolve({});
      const request: HeldRequest = {
        jobId: context.jobId,
        step: context.step,
        input,
        release: (output) => {
          this.unreleased.delete(request);
          resolve(output ?? {});
        },
        fail: (message) => {
          this.unreleased.delete(request);
          reject(new WorkerError(message));
        },
      };
      this.unreleased.add(request);
      this.held.push(request);
    });

  /** Takes the first held request that `matches`, waiting for one to arrive. */
  take(what: string, matches: (request: HeldRequest) => boolean = () => true, timeoutMs = 15_000) {
    return eventually(
      what,
      () => {
        const index = this.held.findIndex(matches);
        return index >= 0 ? this.held.splice(index, 1)[0] : undefined;
      },
      timeoutMs,
    );
  }

  /** Waits until `count` requests are held (and takes none). */
  waitForHeld(what: string, count: number, timeoutMs = 15_000) {
    return eventually(what, () => this.held.length >= count, timeoutMs);
  }

  /** Answers everything still held, and from now on every request at once, so the workers can stop. */
  releaseAll(): void {
    this.closed = true;
    this.held.splice(0);
    for (const request of [...this.unreleased]) request.release({});
  }
}
