import {
  type Credential,
  type CredentialKind,
  credentialHeaders,
  credentialKindFor,
  errorCode,
  errorMessage,
} from './credentials.js';

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
}

export interface ApiClientOptions {
  credential: () => Credential | undefined;
  onAuthRequired: (error: AuthRequiredError) => void;
  fetch?: typeof fetch;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  return {
    async request<T>(path: string, request: RequestOptions = {}): Promise<T> {
      if (path.startsWith('/')) throw new Error(`API paths are relative to the page, got "${path}"`);
      const credential = options.credential();
      const headers: Record<string, string> = {
        accept: 'application/json',
        ...credentialHeaders(credential),
      };
      if (request.body !== undefined) headers['content-type'] = 'application/json';
      const response = await doFetch(path, {
        method: request.method ?? 'GET',
        headers,
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        signal: request.signal,
      });
      const text = await response.text();
      const body = parseBody(text);
      if (response.status === 401 || response.status === 403) {
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
      return body as T;
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
