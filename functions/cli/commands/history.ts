import type { Actor } from '../../../engine/index.js';
import { ApiClient, type ClientOptions } from '../client.js';
import { colourFor, outputFormat, paint, renderTable } from '../terminal.js';

type Out = (line: string) => void;

interface HistoryEntryDocument {
  seq: number;
  at: string;
  kind: string;
  step?: string;
  attempt?: number;
  message?: string;
  actor?: Actor;
  worker?: string;
}

interface EventsPage {
  events: HistoryEntryDocument[];
  dropped: number;
  cursor?: string;
}

/** Who an entry names: the actor of a command, the worker of a reply, else nothing. */
export function whoOf(entry: Pick<HistoryEntryDocument, 'actor' | 'worker'>): string {
  const actor = entry.actor;
  if (actor?.kind === 'token')
    return `token ${actor.id}${actor.description ? ` (${actor.description})` : ''}`;
  if (actor?.kind === 'schedule') return `schedule ${actor.name}`;
  if (actor?.kind === 'root') return 'root';
  return entry.worker ? `worker ${entry.worker}` : '';
}

/** `switchyard history ID`: the job's history, oldest first, every page of it. */
export async function history(
  id: string,
  options: ClientOptions & { output?: string },
  out: Out,
): Promise<void> {
  const format = outputFormat(options.output);
  const client = new ApiClient(options);
  const entries: HistoryEntryDocument[] = [];
  let dropped = 0;
  let cursor: string | undefined;
  // A job keeps at most 200 entries: a handful of pages at most.
  for (let page = 0; page < 10; page++) {
    const query = new URLSearchParams({ limit: '500' });
    if (cursor) query.set('cursor', cursor);
    const answer = await client.get<EventsPage>(`/api/job/${encodeURIComponent(id)}/events?${query}`);
    entries.push(...answer.events);
    dropped = answer.dropped;
    cursor = answer.cursor;
    if (!cursor) break;
  }
  if (format === 'json') {
    out(JSON.stringify({ events: entries, dropped }, null, 2));
    return;
  }
  const p = paint(colourFor(process.stdout));
  const rows = entries.map((entry) => [
    entry.at.replace('T', ' ').replace(/Z$/, 'Z'),
    entry.kind,
    entry.step ? `${entry.step}${entry.attempt ? ` #${entry.attempt}` : ''}` : '',
    whoOf(entry),
    p.red((entry.message ?? '').split('\n')[0] ?? ''),
  ]);
  out(renderTable(['TIME', 'WHAT', 'STEP', 'WHO', 'DETAIL'], rows, p));
  if (dropped > 0) out(p.dim(`(${dropped} entries between the first and the latest 199 are not kept)`));
}
