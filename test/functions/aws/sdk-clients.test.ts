import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTHORIZER_SDK_TIMEOUTS,
  HANDLER_SDK_TIMEOUTS,
  longestSdkCallMs,
  sdkClientConfig,
} from '../../../functions/aws/sdk-clients.js';
import { REPO_ROOT } from '../../../infra/paths.js';
import { sourceFiles } from '../../support/source-imports.js';

/** A server that takes connections and never answers: an AWS endpoint that hangs. */
function silentServer(): Promise<{ server: Server; url: string; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (!address || typeof address === 'string') throw new Error('no port');
      resolve({ server, url: `http://127.0.0.1:${address.port}`, sockets });
    }),
  );
}

describe('Function: sdkClientConfig', () => {
  let silent: Awaited<ReturnType<typeof silentServer>>;
  beforeAll(async () => {
    silent = await silentServer();
  });
  afterAll(async () => {
    for (const socket of silent.sockets) socket.destroy();
    await new Promise((resolve) => silent.server.close(resolve));
  });

  it('makes a call to an endpoint that never answers fail, instead of waiting for the function to be killed', async () => {
    // Prepare: the handlers' configuration, with short timeouts so that the test is quick.
    const client = new DynamoDBClient({
      ...sdkClientConfig({ connectionMs: 500, requestMs: 300, maxAttempts: 2 }),
      endpoint: silent.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });

    // Act
    const call = client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }));

    // Assess: a timeout error (without throwOnRequestTimeout the SDK only warns, and waits on).
    await expect(call).rejects.toThrow(/requestTimeout|timed out|timeout/i);
    client.destroy();
  }, 10_000);

  it('bounds every call of a handler function within the shortest timeout of the functions using it', () => {
    // The API function's 29 s and the authorizer's 10 s (infra: SIZES and token-authorizer.ts).
    expect(longestSdkCallMs(HANDLER_SDK_TIMEOUTS)).toBeLessThan(29_000);
    expect(longestSdkCallMs(AUTHORIZER_SDK_TIMEOUTS)).toBeLessThan(10_000);
  });

  it('is what every AWS SDK client the deployed functions build starts from', () => {
    // The clients the handlers and their adapters create themselves (tests and scripts pass their own).
    const deployed = ['functions/aws', 'functions/handlers'].flatMap((dir) =>
      sourceFiles(join(REPO_ROOT, dir)),
    );
    const unbounded: string[] = [];
    for (const file of deployed) {
      const source = readFileSync(file, 'utf8');
      for (const match of source.matchAll(/new ([A-Z][A-Za-z]*Client)\(([^)]*)\)?/g)) {
        const [, client, args] = match;
        if (client === 'PowertoolsMetricsClient') continue;
        if (!args?.startsWith('sdkClientConfig('))
          unbounded.push(`${file.slice(REPO_ROOT.length + 1)}: new ${client}(${args})`);
      }
    }
    expect(unbounded, 'SDK clients built without sdkClientConfig()').toEqual([]);
  });
});
