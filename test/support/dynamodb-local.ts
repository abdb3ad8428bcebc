import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  switchyardTableInput,
  switchyardTimeToLiveInput,
} from '../../functions/adapters/dynamodb/table-schema.js';

/** A running DynamoDB Local (AWS's own emulator: it runs transactions, conditions, GSIs and TTL settings). */
export interface DynamoDbLocal {
  endpoint: string;
  client: DynamoDBClient;
  /** Milliseconds from spawning Java to the first answered ListTables. */
  startedInMs: number;
  /** A fresh client for the same endpoint (the code under test may want its own). */
  newClient(): DynamoDBClient;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** How long to wait for the first answer. @default 60_000 */
  startTimeoutMs?: number;
}

/** Set to reuse a DynamoDB Local already running (e.g. started once by a global setup). */
const ENDPOINT_VARIABLE = 'SWITCHYARD_DYNAMODB_ENDPOINT';

const require = createRequire(import.meta.url);
const emulatorDir = join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');

export function dynamoDbClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

/**
 * Starts DynamoDB Local in memory on a free port and waits until it answers. `-sharedDb` makes every
 * client see the same tables whatever its credentials or region, so tests use unique table names instead.
 */
export async function startDynamoDbLocal(options: DynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const reused = process.env[ENDPOINT_VARIABLE];
  if (reused) return attach(reused, 0, async () => {});

  const jar = join(emulatorDir, 'DynamoDBLocal.jar');
  if (!existsSync(jar)) {
    throw new Error(`DynamoDB Local is missing at ${jar}: run npm install (amplify-dynamodb-simulator)`);
  }
  const startedAt = Date.now();
  const port = await freePort();
  const java = spawn(
    'java',
    [
      // C1 only and the serial collector: a short-lived test server starts about a third faster.
      '-XX:TieredStopAtLevel=1',
      '-XX:+UseSerialGC',
      `-Djava.library.path=${join(emulatorDir, 'DynamoDBLocal_lib')}`,
      '-jar',
      jar,
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: emulatorDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output = captureOutput(java);
  const killOnExit = (): void => {
    java.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    await terminate(java);
  };

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(endpoint, java, output, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return attach(endpoint, Date.now() - startedAt, stop);
}

/** Creates the Switchyard table (schema shared with the store and the stack), waits for ACTIVE, enables TTL. */
/**
 * Creates the table; with `stream`, its stream of old and new images on (as the stack's, `-c jobEvents`),
 * and returns the stream's ARN.
 */
export async function createSwitchyardTable(
  client: DynamoDBClient,
  tableName: string,
  options: { stream?: boolean } = {},
): Promise<string | undefined> {
  await client.send(
    new CreateTableCommand({
      ...switchyardTableInput(tableName),
      ...(options.stream
        ? { StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' } }
        : {}),
    }),
  );
  const deadline = Date.now() + 30_000;
  let streamArn: string | undefined;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    streamArn = Table?.LatestStreamArn;
    if (Table?.TableStatus === 'ACTIVE') break;
    if (Date.now() > deadline)
      throw new Error(`table ${tableName} is still ${Table?.TableStatus} after 30 s`);
    await delay(50);
  }
  await client.send(new UpdateTimeToLiveCommand(switchyardTimeToLiveInput(tableName)));
  return streamArn;
}

/** A table name no other test uses. */
export function uniqueTableName(prefix = 'switchyard-test'): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

function attach(endpoint: string, startedInMs: number, stopProcess: () => Promise<void>): DynamoDbLocal {
  const clients: DynamoDBClient[] = [];
  const newClient = (): DynamoDBClient => {
    const client = dynamoDbClient(endpoint);
    clients.push(client);
    return client;
  };
  return {
    endpoint,
    client: newClient(),
    startedInMs,
    newClient,
    async stop() {
      for (const client of clients) client.destroy();
      await stopProcess();
    },
  };
}

async function waitUntilAnswering(
  endpoint: string,
  java: ChildProcess,
  output: () => string,
  timeoutMs: number,
): Promise<void> {
  const probe = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  try {
    for (;;) {
      if (java.exitCode !== null || java.signalCode !== null || java.pid === undefined) {
        throw new Error(
          `DynamoDB Local exited (${java.exitCode ?? java.signalCode}) before answering. Is Java 17 installed ` +
            `(java -version)? Its output:\n${output()}`,
        );
      }
      try {
        await probe.send(new ListTablesCommand({}), { abortSignal: AbortSignal.timeout(1_000) });
        return;
      } catch (error) {
        lastError = error;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `DynamoDB Local did not answer at ${endpoint} within ${timeoutMs} ms (last error: ${String(lastError)}). ` +
            `Its output:\n${output()}`,
        );
      }
      await delay(100);
    }
  } finally {
    probe.destroy();
  }
}

function captureOutput(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer): void => {
    text = (text + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  child.once('error', (error) => keep(Buffer.from(`spawn failed: ${error.message}\n`)));
  return () => text;
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** A port the OS says is free now; the tiny race with other processes is acceptable for tests. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
