import { isJsonObject, type Json, type JsonObject } from '../json.js';

/**
 * A `params` value `{ secret: NAME }`: a secret the host resolves only when it sends the request
 * (functions/manager/secret-bus.ts), never written into a job, the outbox, a log or an event.
 */
export interface SecretRef {
  /** Where in the request body: the keys from its top level down. */
  path: readonly string[];
  name: string;
}

/** Secret names: letters, digits, `_`, `-`, `.` and `/`, starting with a letter or `_`; at most 128. */
export const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_./-]{0,127}$/;

/** Whether a value is a secret reference: an object with the one key `secret`. */
function referenceOf(value: Json | undefined): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === 'secret' && typeof value.secret === 'string'
    ? value.secret
    : undefined;
}

/** The secret references of a step's `params` (nested objects included), in key order. */
export function secretRefsOf(params: JsonObject, path: readonly string[] = []): SecretRef[] {
  const refs: SecretRef[] = [];
  for (const [key, value] of Object.entries(params)) {
    const name = referenceOf(value);
    if (name !== undefined) refs.push({ path: [...path, key], name });
    else if (isJsonObject(value)) refs.push(...secretRefsOf(value, [...path, key]));
  }
  return refs;
}

/** The problems of the secret references in `params`: a name that breaks the rule. */
export function secretProblems(params: JsonObject): string[] {
  return secretRefsOf(params)
    .filter((ref) => !SECRET_NAME.test(ref.name))
    .map(
      (ref) =>
        `"params.${ref.path.join('.')}": secret name ${JSON.stringify(ref.name)} must start with a letter or "_" and hold only letters, digits, "_", "-", "." and "/" (at most 128)`,
    );
}

/**
 * `body` with each reference of `refs` replaced by its secret's value, where the body still holds
 * exactly that reference (an input that set the key itself keeps its own value: it may not name
 * another secret). `missing`: the names `values` lacks; nothing is replaced then.
 */
export function withSecretValues(
  body: JsonObject,
  refs: readonly SecretRef[],
  values: ReadonlyMap<string, string>,
): { ok: true; body: JsonObject } | { ok: false; missing: string[] } {
  const missing = [...new Set(refs.map((ref) => ref.name).filter((name) => !values.has(name)))];
  if (missing.length) return { ok: false, missing };
  let result = body;
  for (const ref of refs) {
    const held = valueAt(result, ref.path);
    if (referenceOf(held) !== ref.name) continue;
    result = replacedAt(result, ref.path, values.get(ref.name) as string);
  }
  return { ok: true, body: result };
}

function valueAt(body: JsonObject, path: readonly string[]): Json | undefined {
  let value: Json | undefined = body;
  for (const key of path) {
    if (!isJsonObject(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** A copy of `body` with the value at `path` replaced; the body given is not changed. */
function replacedAt(body: JsonObject, path: readonly string[], value: Json): JsonObject {
  const [key, ...rest] = path as [string, ...string[]];
  const copy: JsonObject = { ...body };
  Object.defineProperty(copy, key, {
    value: rest.length ? replacedAt(body[key] as JsonObject, rest, value) : value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return copy;
}
