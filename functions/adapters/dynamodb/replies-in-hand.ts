import {
  type HeldReplyNote,
  heldReplyNote,
  type RepliesInHand,
  type ReplyDeaths,
} from '../../../engine/index.js';
import { N, num, S, str } from './items.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, type Item, type Key, keyOf } from './table.js';

/** A note lives a week at most (TTL): its reply was settled and the delete lost, or never came back. */
const NOTE_LIFETIME_SECONDS = 7 * 24 * 60 * 60;

/**
 * One reply's note: `RIH#<key>` / `H`, holding `holder` (absent once let go of with `keep`),
 * `heldAlone`, `diedAlone`, `diedAmong`, `since` and `expiresAt`.
 */
function noteKey(key: string): Key {
  return keyOf(`RIH#${key}`, 'H');
}

const BOOL = (value: boolean) => ({ BOOL: value });

/**
 * The crash journal (engine/ports/reply-intake.ts) on DynamoDB: one item per reply in hand. Taking a
 * reply is one `UpdateItem` that sets the holder and returns the item as it was; only when a note
 * was there does a second one write the deaths `heldReplyNote` counts from it (on condition that
 * this holder still has it). Letting go deletes the item, or with `keep` removes its holder, each
 * only while the holder is still this one. Two containers given the same message at once (SQS's
 * at-least-once delivery) may count a death that was none, which the policy's bound absorbs.
 */
export class DynamoDbRepliesInHand implements RepliesInHand {
  constructor(private readonly table: DynamoDbTable) {}

  async holdReply(key: string, holder: string, now: number, alone: boolean): Promise<ReplyDeaths> {
    const taken = await this.table.update({
      Key: noteKey(key),
      UpdateExpression:
        'SET holder = :holder, heldAlone = :alone, since = :since, expiresAt = :expires, ' +
        'diedAlone = if_not_exists(diedAlone, :zero), diedAmong = if_not_exists(diedAmong, :no)',
      ExpressionAttributeValues: {
        ':holder': S(holder),
        ':alone': BOOL(alone),
        ':since': N(now),
        ':expires': N(Math.ceil(now / 1000) + NOTE_LIFETIME_SECONDS),
        ':zero': N(0),
        ':no': BOOL(false),
      },
      ReturnValues: 'ALL_OLD',
    });
    const previous = taken.Attributes && noteOf(taken.Attributes);
    if (!previous) return { alone: 0, amongOthers: false };
    const note = heldReplyNote(previous, holder, now, alone);
    if (note.alone !== previous.alone || note.amongOthers !== previous.amongOthers) {
      try {
        await this.table.update({
          Key: noteKey(key),
          UpdateExpression: 'SET diedAlone = :alone, diedAmong = :among',
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: {
            ':alone': N(note.alone),
            ':among': BOOL(note.amongOthers),
            ':holder': S(holder),
          },
        });
      } catch (error) {
        // Another holder took it meanwhile: it counts from what it found.
        if (!isConditionFailure(error)) throw error;
      }
    }
    return { alone: note.alone, amongOthers: note.amongOthers };
  }

  async releaseReply(key: string, holder: string, keep = false): Promise<void> {
    const mine = {
      ConditionExpression: 'holder = :holder',
      ExpressionAttributeValues: { ':holder': S(holder) },
    };
    try {
      if (!keep) await this.table.delete({ Key: noteKey(key), ...mine });
      else await this.table.update({ Key: noteKey(key), UpdateExpression: 'REMOVE holder', ...mine });
    } catch (error) {
      // Another holder took it meanwhile: the note is theirs now.
      if (!isConditionFailure(error)) throw error;
    }
  }
}

function noteOf(item: Item): HeldReplyNote {
  return {
    holder: str(item, 'holder') ?? '',
    heldAlone: item.heldAlone?.BOOL === true,
    alone: num(item, 'diedAlone') ?? 0,
    amongOthers: item.diedAmong?.BOOL === true,
    since: num(item, 'since') ?? 0,
  };
}
