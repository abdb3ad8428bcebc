import { ApiError, type HostRequest } from './http.js';

/** Query parameters as a host received them: every value given for each name, in order. */
export type RawQuery = HostRequest['query'];

/** `[name, value]` pairs (as `URLSearchParams` gives them) grouped by name. */
export function rawQueryOf(pairs: Iterable<readonly [string, string]>): RawQuery {
  const values = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const given = values.get(name);
    if (given) given.push(value);
    else values.set(name, [value]);
  }
  return Object.fromEntries(values);
}

/**
 * The one value of each parameter. A parameter given more than once (`?id=A&id=B`) is ambiguous:
 * refused, naming it, rather than answered from one of its values.
 */
export function singleValuedQuery(raw: RawQuery): Record<string, string> {
  const entries: [string, string][] = [];
  for (const [name, values] of Object.entries(raw)) {
    if (values.length > 1) {
      throw new ApiError(
        'bad_request',
        `the query parameter ${JSON.stringify(name)} is given ${values.length} times; give it once`,
      );
    }
    const [value] = values;
    if (value !== undefined) entries.push([name, value]);
  }
  // fromEntries defines own properties, so a parameter named `__proto__` stays a parameter.
  return Object.fromEntries(entries);
}
