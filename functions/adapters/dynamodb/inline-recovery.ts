import type { OutboxEntry } from '../../../engine/index.js';
import { inlineEntries } from './inline-outbox.js';
import { jobIdOf } from './items.js';
import type { Candidate } from './merge.js';
import type { SentRequests } from './sent-log.js';
import type { Item } from './table.js';

/** What one recovery page knows of the inline entries it hands on (outbox.ts, young-heads.ts). */
export interface InlineRecovery {
  cursor?: string;
  createdBefore?: number;
  sent: SentRequests;
  /** Told which entries of a job's head recovery hands on, for marking them sent later. */
  onInline: (jobId: string, shorts: readonly string[]) => void;
}

/**
 * What recovery makes of the inline entries a head holds: it hands on those created before
 * `createdBefore` and past the cursor, less the requests the sent log names (sent-log.ts):
 * `sent`, to remove from the head. `holds`: the head holds an entry besides those; `unsent`: it holds
 * one old enough that recovery hands on, whatever the cursor.
 */
export async function recoverable(
  head: Item,
  recovery: InlineRecovery,
): Promise<{ candidates: Candidate<OutboxEntry>[]; sent: string[]; holds: boolean; unsent: boolean }> {
  const { cursor, createdBefore } = recovery;
  const held = inlineEntries(head);
  const old = held.filter(({ entry }) => createdBefore === undefined || entry.createdAt < createdBefore);
  const logged = await recovery.sent.sent(
    old.flatMap(({ entry }) => (entry.kind === 'request' ? [entry] : [])),
  );
  const unsent = old.filter(({ entry }) => !logged.has(entry.id));
  const wanted = unsent.filter(({ sort }) => cursor === undefined || sort > cursor);
  if (wanted.length)
    recovery.onInline(
      jobIdOf(head),
      wanted.map(({ short }) => short),
    );
  return {
    candidates: wanted.map(({ sort, entry }) => ({ sort, value: entry })),
    sent: old.filter(({ entry }) => logged.has(entry.id)).map(({ short }) => short),
    holds: held.length > logged.size,
    unsent: unsent.length > 0,
  };
}
