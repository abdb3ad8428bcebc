import type { TransactWriteItem } from '@aws-sdk/client-dynamodb';
import { keys, S } from './items.js';
import { isConditionFailure } from './retry.js';
import { type DynamoDbTable, forEachLimit, type Item, type Key } from './table.js';

/** One pending write: `payload` is this commit's version; `top` attributes are shared by all versions. */
export interface PendingPut {
  key: Key;
  payload: Item;
  top?: Item;
}

/** Known committed tokens kept per process (a commit never becomes uncommitted). */
const MAX_KNOWN = 10_000;
/** Versions written at once, each its own conditional update. */
const PARALLEL_WRITES = 64;

/**
 * Writes that a commit makes before its job's conditional write, invisible until that write happens.
 *
 * A pending item holds in its list `pv` one version per commit that wrote it (`t` is the commit's
 * token; `po` names the committing job). A version is real once the marker item `JOB#<po>` /
 * `K#<token>` exists, and the marker is written in the same transaction as the job's new revision:
 * so a commit that loses its race leaves versions that nobody ever reads. Two commits racing from
 * the same revision each append their own version to the same item and cannot overwrite each
 * other's; whichever wins, its version is the one read. Writing a version is one update that
 * creates the item or appends to it, refused when a committed item (no `po`) is there: a
 * committed job, entry or timer is never touched. Each version is its own update (many at once):
 * nothing needs two of them to happen together, and a transaction would bill each twice. A committed write of the item (for a job, its own
 * first transition) replaces the item's attributes and removes `pv` and `po`.
 */
export class PendingWrites {
  private readonly known = new Set<string>();
  private readonly lookups = new Map<string, Promise<boolean>>();

  constructor(private readonly table: DynamoDbTable) {}

  /** Writes every version; returns the keys of the items that were already committed (left alone). */
  async putAll(puts: readonly PendingPut[], token: string, committer: string): Promise<Set<string>> {
    const refused = new Set<string>();
    await forEachLimit(puts, PARALLEL_WRITES, async (put) => {
      try {
        await this.table.update(this.update(put, token, committer));
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        refused.add(keyId(put.key));
      }
    });
    return refused;
  }

  private update(
    put: PendingPut,
    token: string,
    committer: string,
  ): NonNullable<TransactWriteItem['Update']> {
    const names: Record<string, string> = { '#pv': 'pv', '#po': 'po' };
    const values: Item = {
      ':mine': { L: [{ M: { ...put.payload, t: S(token) } }] },
      ':none': { L: [] },
      ':committer': S(committer),
    };
    const sets = ['#pv = list_append(if_not_exists(#pv, :none), :mine)', '#po = :committer'];
    Object.entries(put.top ?? {}).forEach(([name, value], n) => {
      names[`#t${n}`] = name;
      values[`:t${n}`] = value;
      sets.push(`#t${n} = :t${n}`);
    });
    return {
      TableName: undefined,
      Key: put.key,
      UpdateExpression: `SET ${sets.join(', ')}`,
      ConditionExpression: 'attribute_not_exists(pk) OR (attribute_exists(#pv) AND #po = :committer)',
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    };
  }

  noteCommitted(committer: string, token: string): void {
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    this.known.add(`${committer}\u0000${token}`);
  }

  async isCommitted(committer: string, token: string): Promise<boolean> {
    const id = `${committer}\u0000${token}`;
    if (this.known.has(id)) return true;
    let lookup = this.lookups.get(id);
    if (!lookup) {
      lookup = this.table.get(keys.marker(committer, token)).then((marker) => {
        if (marker) this.noteCommitted(committer, token);
        return marker !== undefined;
      });
      this.lookups.set(id, lookup);
      const forget = (): void => {
        this.lookups.delete(id);
      };
      lookup.then(forget, forget);
    }
    return lookup;
  }

  /**
   * The item as its committed writer left it: a committed item as it is; a pending one with its
   * committed version's attributes in place of `pv`; undefined when no version is committed (yet).
   */
  async resolve(item: Item): Promise<Item | undefined> {
    const versions = item.pv?.L;
    if (!versions) return item;
    const committer = item.po?.S;
    if (committer === undefined) return undefined;
    for (const version of versions) {
      const token = version.M?.t?.S;
      if (token !== undefined && (await this.isCommitted(committer, token))) {
        const { pv: _pv, po: _po, ...rest } = item;
        const { t: _t, ...payload } = version.M ?? {};
        return { ...rest, ...payload };
      }
    }
    return undefined;
  }

  /** After a lost commit: takes this token's versions back out, deleting items left with none. */
  async withdraw(written: readonly Key[], token: string): Promise<void> {
    await forEachLimit(written, 16, async (key) => {
      // Usually the lost commit's version is the item's only one: try the first place before reading.
      if (await this.removeVersion(key, 0, token)) return;
      const item = await this.table.get(key);
      const index = item?.pv?.L?.findIndex((version) => version.M?.t?.S === token) ?? -1;
      if (index > 0) await this.removeVersion(key, index, token);
    });
  }

  private async removeVersion(key: Key, index: number, token: string): Promise<boolean> {
    try {
      const { Attributes } = await this.table.update({
        Key: key,
        UpdateExpression: `REMOVE #pv[${index}]`,
        ConditionExpression: `#pv[${index}].t = :token`,
        ExpressionAttributeNames: { '#pv': 'pv' },
        ExpressionAttributeValues: { ':token': S(token) },
        ReturnValues: 'ALL_NEW',
      });
      if (Attributes?.pv?.L?.length === 0) {
        await this.table.delete({
          Key: key,
          ConditionExpression: 'attribute_exists(po) AND size(pv) = :none',
          ExpressionAttributeValues: { ':none': { N: '0' } },
        });
      }
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return false;
    }
  }
}

export function keyId(key: Key): string {
  return `${key.pk.S}\u0000${key.sk.S}`;
}
