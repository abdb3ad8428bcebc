import {
  type Credential,
  type CredentialKind,
  credentialHeaders,
  credentialKindFor,
  errorCode,
  errorMessage,
} from './credentials.js';
import { namespacedApiPath } from './namespace-route.js';

/** A 401/403: the page must ask for a credential (again, when `rejected`). */
export class AuthRequiredError extends Error {
  constructor(
    readonly kind: CredentialKind,
    readonly rejected: boolean,
    message: string,
  ) {
    super(message);
    this.name = 'AuthRequiredError';
  }
}

/** Any other refusal, with the API's error code and message. */
export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

export interface ApiClient {
  /** `path` is relative to the page (`api/jobs`), never absolute: deployed, the API lives under a stage path. */
  request<T>(path: string, options?: RequestOptions): Promise<T>;
  /**
   * A GET sent with `If-None-Match: etag`: the body with its `ETag`, or undefined while the resource
   * is still at that version (304).
   */
  requestIfChanged<T>(
    path: string,
    etag: string | undefined,
    options?: { signal?: AbortSignal },
  ): Promise<Tagged<T> | undefined>;
}

export interface Tagged<T> {
  body: T;
  etag?: string;
}

export interface ApiClientOptions {
  credential: () => Credential | undefined;
  /** The namespace the page shows: namespaced paths go beneath `api/ns/{namespace}/`. @default default */
  namespace?: () => string;
  onAuthRequired: (error: AuthRequiredError) => void;
  fetch?: typeof fetch;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));

  async function send<T>(
    path: string,
    request: RequestOptions,
    extraHeaders: Record<string, string>,
  ): Promise<Tagged<T> | undefined> {
    if (path.startsWith('/')) throw new Error(`API paths are relative to the page, got "${path}"`);
    const credential = options.credential();
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...credentialHeaders(credential),
      ...extraHeaders,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const scoped = options.namespace ? namespacedApiPath(options.namespace(), path) : path;
    const response = await doFetch(scoped, {
      method: request.method ?? 'GET',
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: request.signal,
    });
    if (response.status === 304) return undefined;
    const text = await response.text();
    const body = parseBody(text);
    // Switchyard's own 403 is a role too low for this action (a scoped token): shown as an error, as
    // another credential is not what the page should ask for. API Gateway's 403 is a missing key.
    const roleTooLow = response.status === 403 && errorCode(body) === 'forbidden' && credential !== undefined;
    if ((response.status === 401 || response.status === 403) && !roleTooLow) {
      const error = new AuthRequiredError(
        credentialKindFor(body),
        credential !== undefined,
        errorMessage(body) ?? `the API answered ${response.status}`,
      );
      options.onAuthRequired(error);
      throw error;
    }
    if (!response.ok) {
      throw new ApiRequestError(
        response.status,
        errorCode(body),
        errorMessage(body) ?? `the API answered ${response.status} ${response.statusText}`,
      );
    }
    return { body: body as T, etag: response.headers.get('etag') ?? undefined };
  }

  return {
    async request<T>(path: string, request: RequestOptions = {}): Promise<T> {
      const answer = await send<T>(path, request, {});
      if (!answer) throw new ApiRequestError(304, undefined, 'the API answered 304 to a plain request');
      return answer.body;
    },
    requestIfChanged<T>(path: string, etag: string | undefined, request: { signal?: AbortSignal } = {}) {
      return send<T>(path, { signal: request.signal }, etag ? { 'if-none-match': etag } : {});
    },
  };
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
