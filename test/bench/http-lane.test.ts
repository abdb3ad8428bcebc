import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { submitJobs } from '../../bench/http-driver.js';
import { HttpLane } from '../../bench/http-lane.js';

/** A raw TCP server, so that each test decides exactly what bytes answer and when. */
async function rawServer(onRequest: (socket: Socket, request: string) => void): Promise<Server> {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    let pending = '';
    socket.on('data', (chunk) => {
      pending += chunk.toString('latin1');
      for (;;) {
        const headEnd = pending.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(pending.slice(0, headEnd))?.[1] ?? 0);
        const end = headEnd + 4 + length;
        if (pending.length < end) return;
        const request = pending.slice(0, end);
        pending = pending.slice(end);
        if (!socket.writableEnded) onRequest(socket, request);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  return server;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.close();
  }
});

function baseUrl(server: Server): string {
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return `http://127.0.0.1:${address.port}`;
}

function answer(body: string, status = '201 Created'): string {
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

describe("The benchmark driver's HTTP lane", () => {
  it('carries requests one after another on one connection and reads each answer whole', async () => {
    const connections: Socket[] = [];
    const seen: string[] = [];
    const server = await rawServer((socket, request) => {
      if (!connections.includes(socket)) connections.push(socket);
      seen.push(request);
      const reply = answer(JSON.stringify({ id: `job-${seen.length}`, note: 'é' }));
      // The head and the body in separate writes: the lane waits for the body it was promised.
      const split = reply.indexOf('\r\n\r\n') + 4;
      socket.write(reply.slice(0, split));
      setTimeout(() => socket.write(reply.slice(split)), 5);
    });
    const lane = await HttpLane.open(baseUrl(server));
    const first = await lane.request('POST', '/api/workflow/w?id=1', '{"n":1}');
    const second = await lane.request('GET', '/api/workflows');
    lane.close();
    expect(first).toEqual({ status: 201, body: '{"id":"job-1","note":"é"}' });
    expect(second).toEqual({ status: 201, body: '{"id":"job-2","note":"é"}' });
    expect(connections).toHaveLength(1);
    expect(seen[0]).toMatch(/^POST \/api\/workflow\/w\?id=1 HTTP\/1\.1\r\n/);
    expect(seen[0]).toMatch(/\r\ncontent-length: 7\r\n\r\n\{"n":1\}$/);
    expect(seen[1]).toMatch(/^GET \/api\/workflows HTTP\/1\.1\r\nhost: 127\.0\.0\.1:\d+\r\n\r\n$/);
  });

  it('fails a request whose connection closes before its answer, as a reset connection', async () => {
    const server = await rawServer((socket) => socket.destroy());
    const lane = await HttpLane.open(baseUrl(server));
    await expect(lane.request('POST', '/api/workflow/w', '{}')).rejects.toMatchObject({ code: 'ECONNRESET' });
    await expect(lane.request('POST', '/api/workflow/w', '{}')).rejects.toMatchObject({ code: 'ECONNRESET' });
  });

  it('refuses an answer that does not say its length', async () => {
    const server = await rawServer((socket) =>
      socket.write('HTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'),
    );
    const lane = await HttpLane.open(baseUrl(server));
    await expect(lane.request('POST', '/api/workflow/w', '{}')).rejects.toThrow(/without content-length/);
  });

  it('starts every job when the server closes each connection after one answer', async () => {
    let connections = 0;
    const raw = await rawServer((socket, request) => {
      const id = /\?id=([0-9a-f-]+)/.exec(request)?.[1] ?? '';
      socket.end(answer(JSON.stringify({ id })));
    });
    raw.on('connection', () => connections++);
    const ids = await submitJobs(baseUrl(raw), 'w', 5, 2);
    expect(ids).toHaveLength(5);
    expect(new Set(ids).size).toBe(5);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    // Each start after the first on a lane found its connection closed and opened another.
    expect(connections).toBe(5);
  });

  it('reports a start the server refuses', async () => {
    const server = await rawServer((socket) =>
      socket.write(answer('{"error":{"code":"not_found"}}', '404 Not Found')),
    );
    await expect(submitJobs(baseUrl(server), 'w', 3, 1)).rejects.toThrow(/answered 404/);
  });
});
