import { connect } from 'node:net';

/** The RabbitMQ tests fail loudly, never skip, when the broker is missing. */
export default async function globalSetup(): Promise<void> {
  const url = new URL(process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672');
  const reachable = await new Promise<boolean>((resolve) => {
    const socket = connect(Number(url.port || 5672), url.hostname);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
  if (!reachable) {
    throw new Error(
      `RabbitMQ is not reachable at ${url.host}: the tests need it. Run scripts/ensure-test-services.sh ` +
        '(it starts or installs the broker), or start it with: rabbitmq-server -detached',
    );
  }
}
