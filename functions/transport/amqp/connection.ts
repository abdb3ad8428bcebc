import { type ChannelModel, connect } from 'amqplib';
import { FatalRefusalError, isLoginRefusal } from './fatal-refusal.js';
import { amqpUser, connectFailureHint } from './plain-failure.js';
import { describeError, redactUrl, urlForVhost, vhostOfUrl } from './url.js';
import { isVhostRefusal, VhostRefusedError } from './vhost-refusal.js';

/** What the RabbitMQ adapters log through: `console` and Powertools' Logger both fit. */
export interface RabbitMqLogger {
  info(message: string, details?: Record<string, unknown>): void;
  warn(message: string, details?: Record<string, unknown>): void;
  error(message: string, details?: Record<string, unknown>): void;
}

/** Warnings and errors to the console; progress (`info`) stays quiet. */
export const consoleWarnings: RabbitMqLogger = {
  info: () => {},
  warn: (message, details) => (details ? console.warn(message, details) : console.warn(message)),
  error: (message, details) => (details ? console.error(message, details) : console.error(message)),
};

/** Declares queues, opens channels, starts consumers: run on every (re)connection. */
export type ConnectionSetup = (model: ChannelModel) => Promise<void>;

export interface RabbitMqConnectionOptions {
  /** `amqp://` or `amqps://` (Amazon MQ: `amqps://…:5671`); its password never reaches a log. */
  url: string;
  /** The vhost to open; `null` or absent: the URL's own. */
  vhost?: string | null;
  /** Shown by `rabbitmqctl list_connections client_properties` and the management UI. */
  connectionName?: string;
  logger?: RabbitMqLogger;
  /** @default 100 */
  initialDelayMs?: number;
  /** @default 5000 */
  maxDelayMs?: number;
  /** Gives up a TCP/TLS connect that hangs. @default 10000 */
  connectTimeoutMs?: number;
  /**
   * Stop for good, with a `VhostRefusedError`, when the broker refuses the vhost, rather than
   * logging in again and again (a vhost a workflow names). @default false
   */
  stopWhenVhostRefused?: boolean;
  /**
   * Called for each failed connect in place of the warning the connection logs: returns an error to
   * stop for good with (a login the broker refused, say), or nothing to retry after the backoff.
   */
  onConnectFailure?: (failure: ConnectFailure) => Error | undefined;
  /** Stop for good, with a `FatalRefusalError`, when the broker refuses the login. @default false */
  stopWhenLoginRefused?: boolean;
  /** Called when a `FatalRefusalError` stops the connection, at the first connect or any later one. */
  onFatal?: (error: FatalRefusalError) => void;
}

export interface ConnectFailure {
  error: unknown;
  /** The error's message without the URL's secrets. */
  description: string;
}

interface ReadyWaiter {
  /** Rejected by the next failed attempt to connect rather than waiting for a later one. */
  failFast?: boolean;
  resolve(model: ChannelModel): void;
  reject(error: Error): void;
}

/**
 * One AMQP connection to one vhost that keeps itself open: after a broker restart or a dropped
 * connection it reconnects with exponential backoff and jitter, then runs every registered setup
 * again (channels and consumers die with their connection). A setup that fails closes the
 * connection, so the whole setup is retried with the same backoff.
 *
 * (amqplib 2's own `recovery` option takes one fixed setup function; the adapters here add and
 * remove setups while connected, so this small loop owns the reconnecting instead.)
 */
export class RabbitMqConnection {
  readonly safeUrl: string;
  private readonly url: string;
  private readonly logger: RabbitMqLogger;
  private readonly setups = new Set<ConnectionSetup>();
  private readonly waiters = new Set<ReadyWaiter>();
  private readonly firstRunFailures = new Set<(error: Error) => void>();
  private model: ChannelModel | undefined;
  /** True once every setup has run on `model`. */
  private ready = false;
  private closed = false;
  private cancelSleep: (() => void) | undefined;
  /** Why the last connect or setup failed (redacted), for the error of a `whenReady` that gives up. */
  private lastFailure: string | undefined;
  /** Set when the broker refused the vhost and `stopWhenVhostRefused` made this connection stop. */
  refusal: VhostRefusedError | undefined;
  /** Set when a login refusal, a setup's `FatalRefusalError` or `onConnectFailure` made this connection stop. */
  private fatal: Error | undefined;
  private readonly loop: Promise<void>;

  constructor(private readonly options: RabbitMqConnectionOptions) {
    this.url = urlForVhost(options.url, options.vhost ?? null);
    this.safeUrl = redactUrl(this.url);
    this.logger = options.logger ?? consoleWarnings;
    this.loop = this.run();
  }

  get isReady(): boolean {
    return this.ready;
  }

  /**
   * Runs `setup` on the open connection, now if it is open, and again after every reconnect.
   * Resolves with a function that unregisters it once it has run successfully the first time.
   */
  addSetup(setup: ConnectionSetup): Promise<() => void> {
    if (this.closed) return Promise.reject(this.closedError());
    return new Promise((resolve, reject) => {
      let settled = false;
      const fail = (error: Error): void => {
        settled = true;
        reject(error);
      };
      const registered: ConnectionSetup = async (model) => {
        await setup(model);
        if (!settled) {
          settled = true;
          this.firstRunFailures.delete(fail);
          resolve(() => this.setups.delete(registered));
        }
      };
      this.firstRunFailures.add(fail);
      this.setups.add(registered);
      // While setups are running, iterating the Set reaches this one too; once they are done, run it now.
      if (this.ready && this.model) void this.runSetup(this.model, registered);
    });
  }

  /**
   * The open connection with every setup done; waits while reconnecting. With `failFast`, rejects
   * at once while the last attempt to connect failed, and when the next one fails.
   */
  whenReady(timeoutMs?: number, options: { failFast?: boolean } = {}): Promise<ChannelModel> {
    if (this.ready && this.model) return Promise.resolve(this.model);
    if (this.closed) return Promise.reject(this.closedError());
    if (options.failFast && this.lastFailure)
      return Promise.reject(new Error(`RabbitMQ at ${this.safeUrl} is not reachable: ${this.lastFailure}`));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: ReadyWaiter = {
        failFast: options.failFast,
        resolve: (model) => {
          clearTimeout(timer);
          resolve(model);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      this.waiters.add(waiter);
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.waiters.delete(waiter);
          const reason = this.lastFailure ? `: ${this.lastFailure}` : '';
          reject(new Error(`RabbitMQ at ${this.safeUrl} is not reachable within ${timeoutMs} ms${reason}`));
        }, timeoutMs);
      }
    });
  }

  /** Drops the current connection (after a consumer was cancelled by the broker, say): it reconnects. */
  reconnect(reason: string): void {
    const model = this.model;
    if (!model) return;
    this.logger.warn(`RabbitMQ: reconnecting to ${this.safeUrl}: ${reason}`);
    model.close().catch(() => {});
  }

  async close(): Promise<void> {
    if (this.closed) return this.loop;
    this.stop(new Error(`connection to ${this.safeUrl} is closed`));
    const model = this.model;
    if (model) await model.close().catch(() => {});
    await this.loop;
  }

  /** Stops the loop and fails everyone waiting for the connection with `error`. */
  private stop(error: Error): void {
    this.closed = true;
    this.cancelSleep?.();
    for (const waiter of this.waiters) waiter.reject(error);
    this.waiters.clear();
    for (const fail of this.firstRunFailures) fail(error);
    this.firstRunFailures.clear();
  }

  private rejectFailFast(): void {
    for (const waiter of this.waiters) {
      if (!waiter.failFast) continue;
      this.waiters.delete(waiter);
      waiter.reject(new Error(`RabbitMQ at ${this.safeUrl} is not reachable: ${this.lastFailure}`));
    }
  }

  private closedError(): Error {
    return this.refusal ?? this.fatal ?? new Error(`connection to ${this.safeUrl} is closed`);
  }

  private async run(): Promise<void> {
    let failures = 0;
    let connectedBefore = false;
    while (!this.closed) {
      let model: ChannelModel;
      try {
        model = await connect(this.url, {
          timeout: this.options.connectTimeoutMs ?? 10_000,
          // amqplib leaves Nagle's algorithm on (Go, Java, .NET and pika clients switch it off): a
          // write that follows one not yet acknowledged then waits for the broker's delayed ACK, up
          // to 40 ms. Writes are corked per I/O turn (coalesceWrites), so this adds no packets.
          noDelay: true,
          clientProperties: this.options.connectionName
            ? { connection_name: this.options.connectionName }
            : {},
        });
      } catch (error) {
        // Closed while connecting: sleeping first would hold `close()` up for a whole backoff.
        if (this.closed) break;
        if (this.options.stopWhenVhostRefused && isVhostRefusal(error)) {
          this.refusal = new VhostRefusedError(
            this.options.vhost ?? vhostOfUrl(this.options.url),
            this.safeUrl,
            Date.now(),
          );
          this.logger.error(`${this.refusal.message}; not connecting to it again`);
          this.stop(this.refusal);
          break;
        }
        if (this.options.stopWhenLoginRefused && isLoginRefusal(error)) {
          this.fatal = new FatalRefusalError(
            `RabbitMQ at ${this.safeUrl} refused the login of user "${amqpUser(this.options.url)}" (403 ACCESS_REFUSED): ` +
              'check the user name and password in --amqp, AMQP_URL or AMQP_SERVER (the user guest may log in from localhost only)',
          );
          this.stop(this.fatal);
          this.options.onFatal?.(this.fatal);
          break;
        }
        failures++;
        const delay = this.backoff(failures);
        this.lastFailure = describeError(error, this.url);
        this.rejectFailFast();
        const onFailure = this.options.onConnectFailure;
        const fatal = onFailure?.({ error, description: this.lastFailure });
        if (fatal) {
          this.fatal = fatal;
          this.stop(fatal);
          break;
        }
        if (!onFailure) {
          // What to check, once per outage: the lines after it only count the tries.
          const hint = failures === 1 ? connectFailureHint(error) : undefined;
          this.logger.warn(
            `RabbitMQ: cannot connect to ${this.safeUrl}: ${this.lastFailure}${hint ? ` (${hint})` : ''}; retrying in ${delay} ms`,
          );
        }
        await this.sleep(delay);
        continue;
      }
      if (this.closed) {
        await model.close().catch(() => {});
        break;
      }
      const lost = this.watch(model);
      coalesceWrites(model);
      this.model = model;
      if (await this.runSetups(model)) {
        failures = 0;
        this.lastFailure = undefined;
        this.ready = true;
        if (connectedBefore) this.logger.info(`RabbitMQ: reconnected to ${this.safeUrl}`);
        connectedBefore = true;
        for (const waiter of this.waiters) waiter.resolve(model);
        this.waiters.clear();
      }
      const reason = await lost;
      this.ready = false;
      this.model = undefined;
      if (this.closed) break;
      failures++;
      const delay = this.backoff(failures);
      this.logger.warn(
        `RabbitMQ: connection to ${this.safeUrl} lost: ${reason}; reconnecting in ${delay} ms`,
      );
      await this.sleep(delay);
    }
  }

  /** Resolves with the reason when the connection closes. */
  private watch(model: ChannelModel): Promise<string> {
    // Without an 'error' listener a broker-side close would crash the process; 'close' carries the reason.
    model.on('error', () => {});
    model.on('blocked', (reason: string) =>
      this.logger.warn(`RabbitMQ: ${this.safeUrl} blocks publishing: ${reason}`),
    );
    model.on('unblocked', () => this.logger.info(`RabbitMQ: ${this.safeUrl} unblocked publishing`));
    return new Promise((resolve) => {
      model.once('close', (error?: Error) =>
        resolve(error ? describeError(error, this.url) : 'closed by the client'),
      );
    });
  }

  /** Runs every setup in turn; on a failure closes the connection and returns false. */
  private async runSetups(model: ChannelModel): Promise<boolean> {
    for (const setup of this.setups) {
      if (!(await this.runSetup(model, setup))) return false;
    }
    return this.model === model;
  }

  private async runSetup(model: ChannelModel, setup: ConnectionSetup): Promise<boolean> {
    try {
      await setup(model);
      return true;
    } catch (error) {
      if (error instanceof FatalRefusalError && !this.closed) {
        this.fatal = error;
        this.stop(error);
        this.options.onFatal?.(error);
        await model.close().catch(() => {});
        return false;
      }
      if (this.model === model && !this.closed) {
        this.lastFailure = `setup failed: ${describeError(error, this.url)}`;
        this.logger.warn(
          `RabbitMQ: setup on ${this.safeUrl} failed: ${describeError(error, this.url)}; reconnecting`,
        );
        await model.close().catch(() => {});
      }
      return false;
    }
  }

  /** Exponential backoff with ±25% jitter, so that many clients do not reconnect in step. */
  private backoff(failures: number): number {
    const initial = this.options.initialDelayMs ?? 100;
    const max = this.options.maxDelayMs ?? 5_000;
    const base = Math.min(max, initial * 2 ** (failures - 1));
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.cancelSleep = done;
    });
  }
}

/** The parts of amqplib's connection that `coalesceWrites` reaches into (not in its typings). */
interface AmqplibInternals {
  connection?: {
    stream?: { cork?: () => void; uncork?: () => void };
    muxer?: { _readIncoming?: () => void };
  };
}

/**
 * amqplib's multiplexer writes every frame of every channel to the socket with its own write (a
 * system call each: 5–10 % of serve's CPU under load). Corking the socket while it runs sends all the
 * frames it writes in one go as one writev. Left as is when amqplib's internals are not as expected.
 */
function coalesceWrites(model: ChannelModel): void {
  const { stream, muxer } = (model as unknown as AmqplibInternals).connection ?? {};
  const readIncoming = muxer?._readIncoming;
  if (!stream?.cork || !stream.uncork || !muxer || typeof readIncoming !== 'function') return;
  muxer._readIncoming = function (this: unknown) {
    stream.cork?.();
    try {
      readIncoming.call(this);
    } finally {
      stream.uncork?.();
    }
  };
}
