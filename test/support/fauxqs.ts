import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type FauxqsServer, startFauxqs } from 'fauxqs';

/** An in-process SQS emulator (fauxqs speaks the real SQS wire protocol), one per test file. */
export interface Fauxqs {
  endpoint: string;
  client: SQSClient;
  server: FauxqsServer;
  /** Milliseconds the emulator took to listen. */
  startedInMs: number;
  /** A fresh client for the same endpoint (the code under test may want its own). */
  newClient(): SQSClient;
  stop(): Promise<void>;
}

export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

/** Starts fauxqs on a free port (it listens in this process, so it starts in milliseconds). */
export async function startSqsEmulator(): Promise<Fauxqs> {
  const startedAt = Date.now();
  const server = await startFauxqs({ port: 0, logger: false });
  const startedInMs = Date.now() - startedAt;
  const endpoint = `http://127.0.0.1:${server.port}`;
  const clients: SQSClient[] = [];
  const newClient = (): SQSClient => {
    const client = sqsClient(endpoint);
    clients.push(client);
    return client;
  };
  return {
    endpoint,
    client: newClient(),
    server,
    startedInMs,
    newClient,
    async stop() {
      for (const client of clients) client.destroy();
      await server.stop();
    },
  };
}

/** A queue prefix no other test uses, e.g. `t-1234-lq3x9a-`: SQS names allow letters, digits, `-` and `_`. */
export function uniqueQueuePrefix(prefix = 't'): string {
  return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}-`;
}

/** Creates a queue (or finds it, as SQS does for the same attributes) and returns its URL and ARN. */
export async function createQueue(
  client: SQSClient,
  name: string,
  attributes: Record<string, string> = {},
): Promise<{ url: string; arn: string }> {
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  if (!QueueUrl) throw new Error(`no URL for queue ${name}`);
  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  return { url: QueueUrl, arn: Attributes?.QueueArn as string };
}
