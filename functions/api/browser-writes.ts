import { ApiError, type HostRequest } from './http.js';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * A browser marks its requests with `Origin` (on every write) or `Sec-Fetch-Site`; curl, scripts and
 * Node's fetch send neither.
 */
function fromBrowser(headers: Readonly<Record<string, string>>): boolean {
  return headers.origin !== undefined || headers['sec-fetch-site'] !== undefined;
}

function isJson(contentType: string): boolean {
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return type === 'application/json' || /^application\/[^/]+\+json$/.test(type);
}

/**
 * A browser write with a body must say `application/json`: a page of another site can send
 * `text/plain` or a form without asking first (no CORS preflight), but not JSON. A body-less write
 * without a content type (the dashboard's cancel and retry) is not a form: forms always send one.
 */
export function refuseNonJsonBrowserWrite(request: HostRequest): void {
  if (READS.has(request.method.toUpperCase()) || !fromBrowser(request.headers)) return;
  const contentType = request.headers['content-type'];
  if (contentType === undefined ? request.body === '' : isJson(contentType)) return;
  throw new ApiError(
    'unsupported_media_type',
    `a browser's ${request.method.toUpperCase()} must send "Content-Type: application/json"${
      contentType === undefined ? '' : ` (got "${contentType}")`
    }; other content types could come from any web page`,
  );
}
