import { connect, type Socket } from 'node:net';

/** One connection of a flood: what the server sent it, and whether the server ended it. */
export interface FloodSocket {
  socket: Socket;
  /** Everything the server wrote to it. */
  received: string;
  /** Closed, and not by us. */
  closedByServer: boolean;
}

export interface Flood {
  sockets: FloodSocket[];
  /** Connections still open. */
  open(): number;
  closedByServer(): number;
  /** Closes (from this side) up to `count` of the connections still open. */
  release(count?: number): void;
}

export type FloodKind =
  /** Connects and sends nothing. */
  | 'idle'
  /** Sends a request line and then a header line every 200 ms, never ending the headers. */
  | 'slowloris'
  /** Sends complete headers announcing a 1,000-byte body, then a byte of it every 200 ms. */
  | 'slow-body'
  /** Sends one complete request and, once answered, nothing more on its kept-alive connection. */
  | 'kept-alive';

const TRICKLE_MS = 200;
/** Connections opened at once: below the kernel's listen backlog (511 for node:http). */
const BATCH = 250;

/**
 * Opens `count` connections of one kind to `url`'s port and resolves once each is connected (or
 * refused). The trickling kinds keep writing until their connection closes.
 */
export async function flood(url: string, count: number, kind: FloodKind): Promise<Flood> {
  const { hostname, port } = new URL(url);
  const sockets: FloodSocket[] = [];
  const released = new WeakSet<Socket>();
  for (let start = 0; start < count; start += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, count - start) }, () =>
      open(hostname, Number(port), kind, released),
    );
    sockets.push(...(await Promise.all(batch)));
  }
  return {
    sockets,
    open: () => sockets.filter((entry) => !entry.socket.closed).length,
    closedByServer: () => sockets.filter((entry) => entry.closedByServer).length,
    release(limit = Number.POSITIVE_INFINITY) {
      let left = limit;
      for (const entry of sockets) {
        if (left <= 0) break;
        if (entry.socket.closed) continue;
        released.add(entry.socket);
        entry.socket.destroy();
        left -= 1;
      }
    },
  };
}

function open(host: string, port: number, kind: FloodKind, released: WeakSet<Socket>): Promise<FloodSocket> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const entry: FloodSocket = { socket, received: '', closedByServer: false };
    let trickle: NodeJS.Timeout | undefined;
    socket.on('data', (chunk: Buffer) => {
      entry.received += chunk.toString();
    });
    // A connection refused at the cap may be reset: that is the server closing it too.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(trickle);
      entry.closedByServer = !released.has(socket);
      resolve(entry);
    });
    socket.on('connect', () => {
      resolve(entry);
      const request = `${kind === 'slow-body' ? 'POST /api/workflow/none' : 'GET /healthz'} HTTP/1.1\r\nHost: ${host}\r\n`;
      if (kind === 'slowloris') {
        socket.write(request);
        let header = 0;
        trickle = setInterval(() => socket.write(`X-Header-${header++}: x\r\n`), TRICKLE_MS);
      } else if (kind === 'slow-body') {
        socket.write(`${request}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
        trickle = setInterval(() => socket.write(' '), TRICKLE_MS);
      } else if (kind === 'kept-alive') {
        socket.write(`${request}\r\n`);
      }
    });
  });
}
