import { amqpUser } from './plain-failure.js';

/**
 * The broker closed the connection when asked to open the vhost: it does not exist, or the user may
 * not use it. Connecting again would only be refused again (a failed login in the broker's log).
 */
export class VhostRefusedError extends Error {
  constructor(
    readonly vhost: string,
    safeUrl: string,
    /** When the broker refused it (ms since the epoch). */
    readonly at: number,
  ) {
    const user = amqpUser(safeUrl);
    super(
      `RabbitMQ refused the vhost "${vhost}" at ${safeUrl}: it does not exist, or the user may not use it ` +
        `(check with "rabbitmqctl list_vhosts" and "rabbitmqctl list_permissions -p ${vhost}"; ` +
        `"rabbitmqctl set_permissions -p ${vhost} ${user} '.*' '.*' '.*'" lets ${user} use it)`,
    );
    this.name = 'VhostRefusedError';
  }
}

/**
 * amqplib's error when the broker answers `connection.open` with `connection.close` (530
 * NOT_ALLOWED); it keeps no reply text, so the message is all there is to tell it by.
 */
export function isVhostRefusal(error: unknown): boolean {
  return (
    error instanceof Error && error.message.startsWith('Expected ConnectionOpenOk; got <ConnectionClose')
  );
}
