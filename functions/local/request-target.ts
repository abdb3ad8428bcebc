import type { HostRequest } from '../api/http.js';
import { type RawQuery, rawQueryOf } from '../api/query.js';

/** A target of printable ASCII only: what clients send, and what the shortcut below takes. */
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/;

/**
 * The path as the client sent it, and the query's values. WHATWG URL would resolve `..` and
 * `%2E%2E` first, so that `/api/ns/%2E%2E/workflow/x` reached the API as `/api/workflow/x`: the API
 * checks each segment itself and refuses those (400 or 404), as it does behind API Gateway.
 */
export function pathAndQuery(target: string): Pick<HostRequest, 'path' | 'query'> {
  if (!target.startsWith('/')) {
    const url = new URL(target, 'http://localhost');
    return { path: url.pathname, query: rawQueryOf(url.searchParams) };
  }
  const mark = target.indexOf('?');
  return mark < 0
    ? { path: target, query: {} }
    : { path: target.slice(0, mark), query: queryOf(target, mark) };
}

/**
 * The query as URL would read it, without building one for the usual target: the query ends at a
 * `#`, and a `#` before the `?` leaves none. A target with other characters (spaces, controls, bytes
 * past ASCII, which URL trims, drops or encodes before it decodes) goes through URL itself.
 */
function queryOf(target: string, mark: number): RawQuery {
  if (!PRINTABLE_ASCII.test(target)) return rawQueryOf(new URL(target, 'http://localhost').searchParams);
  const fragment = target.indexOf('#');
  if (fragment >= 0 && fragment < mark) return {};
  // URLSearchParams drops a leading `?` of the text it is given (`/x??a` has a parameter `?a`); a
  // leading `&` is an empty pair, which it skips.
  return rawQueryOf(new URLSearchParams(`&${target.slice(mark + 1, fragment < 0 ? undefined : fragment)}`));
}
