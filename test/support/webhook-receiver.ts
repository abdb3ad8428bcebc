import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** How the receiver answers the next posts: at once with a status, after a delay, or never. */
export type ReceiverMode = { status: number } | { status: number; afterMs: number } | 'hang';

export interface ReceivedPost {
  headers: IncomingHttpHeaders;
  body: string;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  posts: ReceivedPost[];
  mode: ReceiverMode;
  /** Resolves once `count` posts have come (all modes record a post as it arrives). */
  received(count: number, timeoutMs?: number): Promise<ReceivedPost[]>;
  close(): Promise<void>;
}

/** A real HTTP receiver on a free port of 127.0.0.1 that records each post and answers as `mode` says. */
export async function startReceiver(
  mode: ReceiverMode = { status: 204 },
  port = 0,
): Promise<WebhookReceiver> {
  const posts: ReceivedPost[] = [];
  const held: ServerResponse[] = [];
  const waiters: (() => void)[] = [];
  const receiver = { mode } as WebhookReceiver;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      posts.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const wake of waiters.splice(0)) wake();
      const current = receiver.mode;
      if (current === 'hang') {
        held.push(response);
        return;
      }
      const answer = () => response.writeHead(current.status).end();
      if ('afterMs' in current) setTimeout(answer, current.afterMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${bound}/hooks`;
  receiver.port = bound;
  receiver.posts = posts;
  receiver.received = async (count, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (posts.length < count) {
      if (Date.now() > deadline) throw new Error(`${posts.length} posts came, not ${count}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
    return posts.slice(0, count);
  };
  receiver.close = async () => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

type Verify = (
  header: unknown,
  body: string,
  secret: string,
  toleranceSeconds?: number,
  now?: number,
) => boolean;

/** The receiver's verification code as docs/notifications.md gives it (the block after `<!-- verify-signature -->`). */
export async function documentedVerifier(): Promise<Verify> {
  const page = await readFile(join(import.meta.dirname, '../../docs/notifications.md'), 'utf8');
  const match = /<!-- verify-signature -->\n```js\n([\s\S]*?)\n```/.exec(page);
  if (!match) throw new Error('docs/notifications.md holds no verify-signature block');
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-verify-'));
  const file = join(dir, 'verify.mjs');
  await writeFile(file, match[1] as string);
  const module = (await import(pathToFileURL(file).href)) as { verifySwitchyardSignature: Verify };
  return module.verifySwitchyardSignature;
}
