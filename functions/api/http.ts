import {
  InvalidCursorError,
  InvalidNameError,
  type JsonObject,
  type Principal,
  StoreUnavailableError,
} from '../../engine/index.js';
import { ManagerError } from '../manager/errors.js';

/** A request as every route sees it, whichever host received it (API Gateway or node:http). */
export interface ApiRequest {
  method: string;
  path: string;
  /** The route's query parameters, checked against their schemas (request-checks.ts). */
  query: Readonly<Record<string, unknown>>;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The raw body text. */
  body: string;
  /** The route's path parameters, percent-decoded and checked against their schemas. */
  params: Readonly<Record<string, unknown>>;
  /** A route that takes a JSON body: the body, read and checked; `{}` for the others. */
  json: JsonObject;
  /** The namespace the path names (`/api/ns/{namespace}/…`), else `default`. */
  namespace: string;
  /** Who the request acts as (the root where the route needs no credentials). */
  principal: Principal;
}

/** A request as a host hands it over, before its query is checked: each parameter with every value given. */
export type HostRequest = Omit<ApiRequest, 'params' | 'query' | 'json' | 'namespace' | 'principal'> & {
  query: Readonly<Record<string, readonly string[]>>;
  /** Who the host's authorizer found the request acts as (`ApiDeps.authorizer`). */
  principal?: Principal;
};

export interface ApiResponse {
  status: number;
  headers?: Record<string, string>;
  body: string;
  /** A streamed answer (serve's `GET /api/events`): the host writes the headers, then hands it the connection. */
  stream?: EventStreamStart;
}

/** Where a streamed answer writes; `write` says false once the client's buffer passes its bound. */
export interface StreamSink {
  write(text: string): boolean;
  end(): void;
  /** Ends it at once, whatever is still buffered (a client that cannot keep up). */
  drop(): void;
  /** Called once, when the client goes away or the host ends the stream. */
  onClose(handler: () => void): void;
}

export type EventStreamStart = (sink: StreamSink) => void;

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'not_implemented'
  | 'unavailable'
  | 'store_unavailable'
  | 'internal';

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  not_implemented: 501,
  unavailable: 503,
  store_unavailable: 503,
  internal: 500,
};

/** A refusal with the status and JSON error body of api.md. */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get status(): number {
    return STATUS[this.code];
  }
}

export function json(status: number, value: unknown, headers: Record<string, string> = {}): ApiResponse {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(value),
  };
}

/** 304 Not Modified: the caller's copy, tagged `etag`, is current. */
export function notModified(etag: string): ApiResponse {
  return { status: 304, headers: { etag }, body: '' };
}

/**
 * Whether `If-None-Match` fails for a resource tagged `etag` (RFC 9110 §13.1.2): the header is `*`
 * or names the tag, compared weakly (`W/"1"` matches `"1"`).
 */
export function ifNoneMatchFails(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return header.split(',').some((tag) => opaque(tag) === wanted);
}

/** Seconds a caller refused with `store_unavailable` waits before trying again. */
const STORE_RETRY_AFTER_SECONDS = 5;

export function errorResponse(error: unknown): ApiResponse {
  const apiError = toApiError(error);
  const headers: Record<string, string> =
    apiError.code === 'store_unavailable' ? { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) } : {};
  return json(apiError.status, { error: { code: apiError.code, message: apiError.message } }, headers);
}

export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof InvalidCursorError) return new ApiError('bad_request', error.message);
  if (error instanceof RangeError && error.message === 'Invalid string length') {
    // V8 refused to build a string that long: a request the command made ready (its `input:`
    // mapping) outgrew every size limit before it could be measured. Nothing was stored.
    return new ApiError(
      'payload_too_large',
      'a request this command would send is far larger than the size limit: give the step only what its worker needs with an "input:" mapping',
    );
  }
  // The routes check names first; this is the engine's own refusal, should a name get past them.
  if (error instanceof InvalidNameError) return new ApiError('bad_request', error.message);
  if (error instanceof StoreUnavailableError) return new ApiError('store_unavailable', error.message);
  if (error instanceof ManagerError) {
    const code: ErrorCode =
      error.code === 'invalid'
        ? 'bad_request'
        : error.code === 'too_large'
          ? 'payload_too_large'
          : error.code === 'unavailable'
            ? 'unavailable'
            : error.code;
    return new ApiError(code, error.message);
  }
  return new ApiError('internal', 'internal error; see the manager log');
}

/**
 * Why the manager refused a command (a job that ended, one not failed), or undefined for any other
 * error, which the caller lets through (the store down, a bug): a batch command names the refused
 * jobs and goes on with the others.
 */
export function commandRefusalOf(error: unknown): string | undefined {
  return error instanceof ManagerError && error.code !== 'unavailable' ? error.message : undefined;
}
