import { DEFAULT_NAMESPACE, namespaceProblem } from '../../engine/index.js';
import { isNamespacedApiPath, namespacedApiPath } from '../api/namespace-scope.js';

/** A small client for the HTTP API, for the command line. */

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

export interface ClientOptions {
  url?: string;
  token?: string;
  /** The deployed API's key (API Gateway reads it from `x-api-key`). */
  apiKey?: string;
  /** The namespace workflows and jobs are named in (default: $SWITCHYARD_NAMESPACE, then `default`). */
  namespace?: string;
}

export class ApiClient {
  readonly baseUrl: string;
  private readonly token?: string;
  private readonly apiKey?: string;
  readonly namespace: string;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.url ?? process.env.SWITCHYARD_URL ?? DEFAULT_URL).replace(/\/+$/, '');
    this.token = options.token ?? process.env.SWITCHYARD_TOKEN;
    this.apiKey = options.apiKey ?? process.env.SWITCHYARD_API_KEY;
    this.namespace = options.namespace || process.env.SWITCHYARD_NAMESPACE || DEFAULT_NAMESPACE;
    const problem = namespaceProblem(this.namespace);
    if (problem) throw new CliError(`--namespace (or SWITCHYARD_NAMESPACE): ${problem}`);
  }

  /** The path as the API serves it in this client's namespace. */
  private scoped(path: string): string {
    return namespacedApiPath(this.namespace, path);
  }

  /** The dashboard's page of a job, in this client's namespace. */
  jobLink(id: string): string {
    const scope = this.namespace === DEFAULT_NAMESPACE ? '' : `ns/${encodeURIComponent(this.namespace)}/`;
    return `${this.baseUrl}/#/${scope}job/${id}`;
  }

  async request<T>(
    method: string,
    path: string,
    body?: string,
    contentType = 'application/json',
    extraHeaders: Record<string, string> = {},
  ): Promise<{ status: number; body: T; etag?: string }> {
    const headers: Record<string, string> = { ...extraHeaders };
    if (body !== undefined) headers['content-type'] = contentType;
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${this.scoped(path)}`, { method, headers, body });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new CliError(
        cause === 'ECONNREFUSED'
          ? `no switchyard answers at ${this.baseUrl}: start one with "switchyard serve --config FILE", or point --url (or SWITCHYARD_URL) at it`
          : `cannot reach ${this.baseUrl}: ${(error as Error).message}${cause ? ` (${cause})` : ''}`,
      );
    }
    const etag = response.headers.get('etag') ?? undefined;
    // Not Modified answers a request that named the version it holds; any other 304 is refused below.
    if (response.status === 304 && headers['if-none-match'])
      return { status: 304, body: undefined as T, etag };
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    if (!response.ok) {
      const message =
        (parsed as { error?: { message?: string } })?.error?.message ?? (text || response.statusText);
      const hint =
        response.status === 401
          ? ' (set SWITCHYARD_TOKEN to the token serve was started with, or a scoped token that is not revoked)'
          : response.status === 403
            ? " (the token's role or namespace does not allow this)"
            : response.status === 404 && isNamespacedApiPath(path)
              ? ` (in namespace "${this.namespace}"; --namespace or SWITCHYARD_NAMESPACE names another)`
              : '';
      throw new CliError(`${method} ${path}: ${response.status} ${message}${hint}`);
    }
    return { status: response.status, body: parsed as T, etag };
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path).then((response) => response.body);
  }

  /** GET with `If-None-Match: etag`: the new body and its tag, or undefined while it is unchanged (304). */
  async getIfChanged<T>(
    path: string,
    etag: string | undefined,
  ): Promise<{ body: T; etag?: string } | undefined> {
    const response = await this.request<T>(
      'GET',
      path,
      undefined,
      undefined,
      etag ? { 'if-none-match': etag } : {},
    );
    return response.status === 304 ? undefined : { body: response.body, etag: response.etag };
  }
}
