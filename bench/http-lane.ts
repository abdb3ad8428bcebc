import { connect, type Socket } from 'node:net';

/*
 * A load generator's HTTP/1.1 client, as wrk's or autocannon's: one kept-alive connection carrying
 * one request at a time, written as one string and its response read by its Content-Length. The
 * driver shares the two cores with what it measures; node:http's client took about 140 µs of CPU a
 * job start there (its agent, streams and events per request), which serve's diamonds then lacked.
 */

export interface LaneResponse {
  status: number;
  body: string;
}

interface Waiting {
  resolve(response: LaneResponse): void;
  reject(error: Error): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

function connectionGone(message: string, cause?: Error): Error {
  return Object.assign(new Error(message, { cause }), { code: 'ECONNRESET' });
}

export class HttpLane {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: Waiting | undefined;
  private closed: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    private readonly host: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // However the connection ends (reset, closed by serve, a write after serve's FIN), it is gone:
    // one code for all, so that a caller knows to open another and send the request again.
    socket.on('error', (error) => this.fail(connectionGone(error.message, error)));
    socket.on('end', () => this.fail(connectionGone('serve closed the connection')));
    socket.on('close', () => this.fail(connectionGone('serve closed the connection')));
  }

  static open(baseUrl: string): Promise<HttpLane> {
    const { hostname, port, host } = new URL(baseUrl);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port || 80) }, () => {
        socket.off('error', reject);
        resolve(new HttpLane(socket, host));
      });
      socket.once('error', reject);
    });
  }

  /** Sends one request with a JSON body (or none) and resolves with the response's status and text. */
  request(method: string, path: string, body?: string): Promise<LaneResponse> {
    if (this.closed) return Promise.reject(this.closed);
    if (this.waiting) return Promise.reject(new Error('an HttpLane carries one request at a time'));
    const head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}\r\n`;
    this.socket.write(
      body === undefined
        ? `${head}\r\n`
        : `${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  close(): void {
    this.socket.end();
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const headerEnd = this.buffer.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.buffer.toString('latin1', 0, headerEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!length) {
      this.fail(new Error(`a response without content-length: ${head.split('\r\n')[0]}`));
      this.socket.destroy();
      return;
    }
    const end = headerEnd + HEADER_END.length + Number(length[1]);
    if (this.buffer.length < end) return;
    const response = {
      status: Number(head.slice(9, 12)),
      body: this.buffer.toString('utf8', headerEnd + HEADER_END.length, end),
    };
    this.buffer = this.buffer.subarray(end);
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(response);
  }

  private fail(error: Error): void {
    this.closed ??= error;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
  }
}
