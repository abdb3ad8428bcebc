import { isLoginRefusal } from '../../transport/amqp/fatal-refusal.js';
import { redactUrl, vhostOfUrl } from '../../transport/amqp/url.js';
import { isVhostRefusal } from '../../transport/amqp/vhost-refusal.js';

/**
 * The broker refused the worker's login (403 ACCESS_REFUSED) or its vhost (530 NOT_ALLOWED): trying
 * again would only be refused again, so the worker stops with this instead of retrying.
 */
export class BrokerRefusedError extends Error {
  constructor(
    readonly refused: 'login' | 'vhost',
    message: string,
  ) {
    super(message);
    this.name = 'BrokerRefusedError';
  }
}

/** The refusal a failed connect to `url` is, said without the password; undefined for any other failure. */
export function brokerRefusal(error: unknown, url: string): BrokerRefusedError | undefined {
  const where = `RabbitMQ at ${redactUrl(url)}`;
  const user = userOf(url);
  if (isLoginRefusal(error)) {
    return new BrokerRefusedError(
      'login',
      `${where} refused the login of user "${user}" (403 ACCESS_REFUSED): check the user name and ` +
        'password in the URL (amqpUrl, AMQP_URL or AMQP_SERVER)',
    );
  }
  if (isVhostRefusal(error)) {
    const vhost = vhostOfUrl(url);
    return new BrokerRefusedError(
      'vhost',
      `${where} refused the vhost "${vhost}" (530 NOT_ALLOWED): check that the vhost (the URL's path) ` +
        `exists and that user "${user}" may use it`,
    );
  }
  return undefined;
}

function userOf(url: string): string {
  const username = URL.parse(url)?.username ?? '';
  try {
    return decodeURIComponent(username) || 'guest';
  } catch {
    return username;
  }
}
