import { HISTORY_KINDS, type HistoryKind } from '../job/history-entry.js';
import { describeJsonType, isJsonObject, type Json } from '../json.js';
import { closest } from './closest.js';
import { SECRET_NAME } from './secrets.js';

/**
 * Where a job's events are posted (`notify:`, or the host's default): a URL, the history kinds
 * wanted (engine/job/history-entry.ts), and the name of the secret that signs each delivery.
 */
export interface NotifyTarget {
  url: string;
  events: HistoryKind[];
  /** A secret name (engine/definition/secrets.ts); its value signs the body, never stored. */
  secret: string;
}

/** A workflow has at most this many targets: each event is one delivery per target. */
export const MAX_NOTIFY_TARGETS = 5;
export const MAX_NOTIFY_URL_LENGTH = 2000;

const KINDS: ReadonlySet<string> = new Set(HISTORY_KINDS);

/**
 * The targets of a `notify:` value (one mapping or a list of them), or the problems that make it
 * invalid, each with the path under `notify` it is about.
 */
export function readNotify(
  raw: Json,
):
  | { ok: true; targets: NotifyTarget[] }
  | { ok: false; problems: { at: (string | number)[]; message: string }[] } {
  const list = Array.isArray(raw) ? raw : [raw];
  const problems: { at: (string | number)[]; message: string }[] = [];
  if (list.length > MAX_NOTIFY_TARGETS) {
    problems.push({
      at: [],
      message: `"notify" names ${list.length} targets; a workflow may name at most ${MAX_NOTIFY_TARGETS}`,
    });
  }
  const targets: NotifyTarget[] = [];
  list.forEach((item, index) => {
    const at = Array.isArray(raw) ? [index] : [];
    const target = readTarget(item, (key, message) => problems.push({ at: [...at, ...key], message }));
    if (target) targets.push(target);
  });
  return problems.length ? { ok: false, problems } : { ok: true, targets };
}

function readTarget(raw: Json, report: (at: string[], message: string) => void): NotifyTarget | undefined {
  if (!isJsonObject(raw)) {
    report(
      [],
      `"notify" must be a mapping { url, events, secret } or a list of them, got ${describeJsonType(raw)}`,
    );
    return undefined;
  }
  let ok = true;
  for (const key of Object.keys(raw)) {
    if (key === 'url' || key === 'events' || key === 'secret') continue;
    report([key], `unknown key "${key}" in "notify" (it takes url, events and secret)`);
    ok = false;
  }
  const url = urlProblem(raw.url);
  if (url) {
    report(['url'], url);
    ok = false;
  }
  const events = raw.events;
  if (!Array.isArray(events) || events.length === 0) {
    report(
      ['events'],
      `"events" must be a list of event names such as [job.completed, job.failed], got ${describeJsonType(events ?? null)}`,
    );
    ok = false;
  } else {
    events.forEach((event, index) => {
      if (typeof event === 'string' && KINDS.has(event)) return;
      const near = typeof event === 'string' ? closest(event, HISTORY_KINDS) : undefined;
      report(
        ['events', String(index)],
        `unknown event ${JSON.stringify(event)}${near ? ` (did you mean "${near}"?)` : ''}; the events are ${HISTORY_KINDS.join(', ')}`,
      );
      ok = false;
    });
  }
  const secret = raw.secret;
  if (typeof secret !== 'string' || !SECRET_NAME.test(secret)) {
    report(
      ['secret'],
      `"secret" must name the secret that signs each delivery (letters, digits, "_", "-", "." and "/", starting with a letter or "_"), got ${JSON.stringify(secret ?? null)}`,
    );
    ok = false;
  }
  if (!ok) return undefined;
  return {
    url: raw.url as string,
    events: [...new Set(events as HistoryKind[])],
    secret: secret as string,
  };
}

/** Why `value` is not a URL deliveries may go to (http or https, no credentials in it), if it is not. */
export function urlProblem(value: Json | undefined): string | undefined {
  if (typeof value !== 'string' || value === '') {
    return `"url" must be an http or https URL, got ${describeJsonType(value ?? null)}`;
  }
  if (value.length > MAX_NOTIFY_URL_LENGTH)
    return `"url" is ${value.length} characters long; at most ${MAX_NOTIFY_URL_LENGTH}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `"url" ${JSON.stringify(value)} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `"url" ${JSON.stringify(value)} must use http or https, not ${url.protocol.slice(0, -1)}`;
  if (url.username || url.password)
    return `"url" must not hold credentials: deliveries are signed with the target's secret instead`;
  return undefined;
}
