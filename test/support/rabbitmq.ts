import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { type Channel, type ChannelModel, connect } from 'amqplib';
import { urlForVhost } from '../../functions/transport/amqp/url.js';

const run = promisify(execFile);

/** The broker the tests use (scripts/ensure-test-services.sh starts it). */
export const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A name no other test (or test file running at the same time) uses: `<prefix>-<random>`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['-q', ...args], { timeout: 60_000 });
  return stdout;
}

/**
 * Closes, from the broker's side, every connection whose `connection_name` client property starts
 * with `prefix`, as a broker restart or a network failure would; other files' connections stay
 * open (unlike `rabbitmqctl close_all_connections`). Returns how many it closed.
 */
export async function closeConnectionsNamed(prefix: string, reason = 'closed by a test'): Promise<number> {
  const listing = await rabbitmqctl('list_connections', '--no-table-headers', 'pid', 'client_properties');
  const pids: string[] = [];
  for (const line of listing.split('\n')) {
    const [pid, properties] = line.split('\t');
    const name = properties?.match(/\{"connection_name","([^"]*)"\}/)?.[1];
    if (pid && name?.startsWith(prefix)) pids.push(pid.trim());
  }
  for (const pid of pids) await rabbitmqctl('close_connection', pid, reason);
  return pids.length;
}

/** Creates a vhost that guest may use fully. */
export async function addVhost(vhost: string): Promise<void> {
  await rabbitmqctl('add_vhost', vhost);
  await rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
}

export async function deleteVhost(vhost: string): Promise<void> {
  await rabbitmqctl('delete_vhost', vhost);
}

/** A plain amqplib connection and channel, for looking at what the code under test did. */
export async function openTestChannel(
  vhost: string | null = null,
): Promise<{ model: ChannelModel; channel: Channel }> {
  const model = await connect(urlForVhost(AMQP_URL, vhost), {
    clientProperties: { connection_name: 'switchyard-test-inspector' },
  });
  model.on('error', () => {});
  const channel = await model.createChannel();
  channel.on('error', () => {});
  return { model, channel };
}

/** Deletes queues (those that exist) on a connection of its own. */
export async function deleteQueues(queues: Iterable<string>, vhost: string | null = null): Promise<void> {
  const { model } = await openTestChannel(vhost);
  try {
    for (const queue of queues) {
      const channel = await model.createChannel();
      channel.on('error', () => {});
      await channel.deleteQueue(queue).catch(() => {});
      await channel.close().catch(() => {});
    }
  } finally {
    await model.close().catch(() => {});
  }
}

/** Polls `probe` until it returns something other than undefined/false, or fails with `what` after the deadline. */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Counts of ready and unacknowledged messages, as the broker reports them (slow: runs rabbitmqctl). */
export async function queueCounts(
  queue: string,
  vhost = '/',
): Promise<{ ready: number; unacknowledged: number } | undefined> {
  const listing = await rabbitmqctl(
    'list_queues',
    '--no-table-headers',
    '-p',
    vhost,
    'name',
    'messages_ready',
    'messages_unacknowledged',
  );
  for (const line of listing.split('\n')) {
    const [name, ready, unacknowledged] = line.split('\t');
    if (name === queue) return { ready: Number(ready), unacknowledged: Number(unacknowledged) };
  }
  return undefined;
}
