import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RabbitMqConnection, type RabbitMqLogger } from '../../../../functions/transport/amqp/connection.js';
import {
  redactSecrets,
  redactUrl,
  urlForVhost,
  vhostOfUrl,
} from '../../../../functions/transport/amqp/url.js';
import { AMQP_URL, eventually } from '../../../support/rabbitmq.js';

/**
 * A TCP relay to the broker that can go away and come back on the same port: a broker restart or a
 * network outage for this test's connections only, leaving the shared broker alone.
 */
class BrokerOutage {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  async up(): Promise<void> {
    const target = new URL(AMQP_URL);
    const server = createServer((client) => {
      const broker = connectTcp(Number(target.port || 5672), target.hostname);
      for (const socket of [client, broker]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(broker).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.server = server;
  }

  async down(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }

  url(password = 'guest'): string {
    return `amqp://guest:${password}@127.0.0.1:${this.port}`;
  }
}

function recordingLogger(): { logger: RabbitMqLogger; lines: string[] } {
  const lines: string[] = [];
  const record = (message: string): void => {
    lines.push(message);
  };
  return { logger: { info: record, warn: record, error: record }, lines };
}

const outages: BrokerOutage[] = [];
const connections: RabbitMqConnection[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await Promise.all(outages.splice(0).map((outage) => outage.down()));
});

describe('Class: RabbitMqConnection', () => {
  it('reconnects with backoff after the broker went away, and runs its setups again', async () => {
    // Prepare
    const outage = new BrokerOutage();
    outages.push(outage);
    await outage.up();
    const { logger, lines } = recordingLogger();
    const connection = new RabbitMqConnection({
      url: outage.url(),
      logger,
      initialDelayMs: 20,
      maxDelayMs: 200,
    });
    connections.push(connection);
    let setups = 0;
    await connection.addSetup(async (model) => {
      const channel = await model.createChannel();
      await channel.close();
      setups++;
    });
    expect(setups).toBe(1);

    // Act: the broker disappears for a while (connects are refused), then comes back.
    await outage.down();
    await eventually(
      'several refused reconnects',
      () => lines.filter((line) => /cannot connect/.test(line)).length >= 3,
    );
    expect(connection.isReady).toBe(false);
    await outage.up();

    // Assess
    await eventually('the setup to run again', () => setups === 2);
    await expect(connection.whenReady(5_000)).resolves.toBeDefined();
    expect(lines.some((line) => /lost/.test(line))).toBe(true);
    expect(lines.some((line) => /reconnected/.test(line))).toBe(true);
  });

  it('retries a setup that fails, on a new connection', async () => {
    const { logger, lines } = recordingLogger();
    const connection = new RabbitMqConnection({ url: AMQP_URL, logger, initialDelayMs: 10 });
    connections.push(connection);
    let runs = 0;

    await connection.addSetup(async () => {
      runs++;
      if (runs < 3) throw new Error('not yet');
    });

    expect(runs).toBe(3);
    expect(lines.filter((line) => /setup .* failed: not yet; reconnecting/.test(line))).toHaveLength(2);
  });

  it('closes without waiting out a backoff when closed while a connect is under way', async () => {
    // Prepare: a port that takes the TCP connection and never answers the AMQP handshake.
    const silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const connection = new RabbitMqConnection({
      url: `amqp://guest:guest@127.0.0.1:${port}`,
      logger: recordingLogger().logger,
      connectTimeoutMs: 300,
      initialDelayMs: 10_000,
    });

    // Act: close while the first connect waits for the handshake.
    const closedAt = Date.now();
    await connection.close();
    const closeMs = Date.now() - closedAt;
    silent.close();

    // Assess: the connect's 300 ms, not the 10 s backoff after it.
    expect(closeMs).toBeLessThan(2_000);
  });

  it('never writes the password to its log', async () => {
    // Prepare: a broker that refuses the connection, then one that rejects the login.
    const outage = new BrokerOutage();
    outages.push(outage);
    await outage.up();
    await outage.down();
    const { logger, lines } = recordingLogger();
    const refused = new RabbitMqConnection({ url: outage.url('p%40ss-w0rd'), logger, initialDelayMs: 10 });
    const wrongLogin = new RabbitMqConnection({
      url: AMQP_URL.replace(/\/\/[^@]*@/, '//guest:n0t-the-p4ssword@'),
      logger,
      initialDelayMs: 10,
    });
    connections.push(refused, wrongLogin);

    // Act
    await expect(refused.whenReady(300)).rejects.toThrow(/not reachable/);
    await expect(wrongLogin.whenReady(300)).rejects.toThrow(/not reachable/);
    await eventually('a log line for each', () => lines.some((line) => /ACCESS.REFUSED|403/.test(line)));

    // Assess
    const log = lines.join('\n');
    expect(log).toContain('guest:***@');
    for (const secret of ['p%40ss-w0rd', 'p@ss-w0rd', 'n0t-the-p4ssword']) expect(log).not.toContain(secret);
  });
});

describe('Module: rabbitmq-url', () => {
  it('redacts the password of a URL and in any text', () => {
    const url = 'amqps://admin:s%3Acret@b-1234.mq.eu-west-1.amazonaws.com:5671/prod';

    expect(redactUrl(url)).toBe('amqps://admin:***@b-1234.mq.eu-west-1.amazonaws.com:5671/prod');
    expect(redactSecrets(`failed: ${url} (password s:cret)`, url)).toBe(
      'failed: amqps://admin:***@b-1234.mq.eu-west-1.amazonaws.com:5671/prod (password ***)',
    );
    expect(redactUrl('not a url with secret')).not.toContain('secret');
  });

  it('points a URL at another vhost, and reads the vhost of a URL as amqplib does', () => {
    expect(urlForVhost('amqp://u:p@host:5672/a', 'team b')).toBe('amqp://u:p@host:5672/team%20b');
    expect(urlForVhost('amqp://u:p@host:5672?heartbeat=10', '/')).toBe(
      'amqp://u:p@host:5672/%2F?heartbeat=10',
    );
    expect(urlForVhost('amqp://u:p@host/a', null)).toBe('amqp://u:p@host/a');
    expect(vhostOfUrl('amqp://host')).toBe('/');
    expect(vhostOfUrl('amqp://host/')).toBe('/');
    expect(vhostOfUrl('amqp://host/team%20b')).toBe('team b');
    expect(() => urlForVhost('http://u:secret@host', null)).toThrow(/amqp:\/\/ or amqps:\/\//);
  });

  it('refuses a URL it cannot parse without quoting it, and redacts it whole in any text', () => {
    const unparseable = 'amqp://u:s3cret@[not-a-host';

    expect(() => vhostOfUrl(unparseable)).toThrow('invalid AMQP URL: <unparseable AMQP URL>');
    expect(() => urlForVhost(unparseable, 'a')).toThrow(/^invalid AMQP URL: <unparseable AMQP URL>$/);
    expect(redactSecrets(`failed: ${unparseable}`, unparseable)).toBe('failed: <unparseable AMQP URL>');
  });
});
