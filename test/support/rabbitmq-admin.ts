import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function rabbitmqctl(...args: string[]): Promise<string> {
  const { stdout } = await run('rabbitmqctl', ['-q', ...args], { timeout: 120_000 });
  return stdout;
}

/** A broker user with full rights on the default vhost, for a test that needs credentials of its own. */
export async function addUser(name: string, password: string): Promise<void> {
  await rabbitmqctl('add_user', name, password);
  await rabbitmqctl('set_permissions', '-p', '/', name, '.*', '.*', '.*');
}

export async function deleteUser(name: string): Promise<void> {
  await rabbitmqctl('delete_user', name).catch(() => {});
}

/** Closes, from the broker's side, every connection logged in as `user`; returns how many. */
export async function closeConnectionsOfUser(user: string, reason = 'closed by a test'): Promise<number> {
  const listing = await rabbitmqctl('list_connections', '--no-table-headers', 'pid', 'user');
  const pids = listing
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([pid, owner]) => pid && owner?.trim() === user)
    .map(([pid]) => (pid as string).trim());
  for (const pid of pids) await rabbitmqctl('close_connection', pid, reason);
  return pids.length;
}

/**
 * Stops the broker's application (the Erlang node stays up): every client loses its connection and
 * cannot reconnect until `startBroker`. Disturbs every test using the broker: soak runs only.
 */
export async function stopBroker(): Promise<void> {
  await rabbitmqctl('stop_app');
}

/** Starts the broker's application again and waits until it accepts work. */
export async function startBroker(): Promise<void> {
  await rabbitmqctl('start_app');
  await rabbitmqctl('await_startup');
}

/** Whether the broker accepts AMQP connections on 127.0.0.1:5672 (not while stopped with `stopBroker`). */
export function brokerListening(port = 5672): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
