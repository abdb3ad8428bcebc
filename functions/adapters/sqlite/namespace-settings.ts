import type Database from 'better-sqlite3';
import type { NamespaceSettings } from '../../../engine/index.js';

/** A `namespace_settings` row: one column for each field of `NamespaceSettings`, so none goes unstored. */
type NamespaceSettingsRow = {
  [K in keyof Required<NamespaceSettings>]: NamespaceSettings[K] extends string | number
    ? NamespaceSettings[K]
    : string | null;
};

function rowOf(settings: NamespaceSettings): NamespaceSettingsRow {
  return {
    namespace: settings.namespace,
    queuePrefix: settings.queuePrefix ?? null,
    vhosts: settings.vhosts === undefined ? null : JSON.stringify(settings.vhosts),
    updatedAt: settings.updatedAt,
  };
}

function settingsOf(row: NamespaceSettingsRow): NamespaceSettings {
  return {
    namespace: row.namespace,
    ...(row.queuePrefix === null ? {} : { queuePrefix: row.queuePrefix }),
    ...(row.vhosts === null ? {} : { vhosts: JSON.parse(row.vhosts) as string[] }),
    updatedAt: row.updatedAt,
  };
}

const SELECT =
  'SELECT namespace, queue_prefix AS queuePrefix, vhosts, updated_at AS updatedAt FROM namespace_settings';

/**
 * The operator's namespace settings and the manager's keys: small tables, read at a registration
 * or a start with `?vhost=`, written by an operator, or once. Synchronous: the store wraps each call.
 */
export class NamespaceSettingsTable {
  private readonly one;
  private readonly all;
  private readonly save;
  private readonly key;
  private readonly insertKey;

  constructor(db: Database.Database) {
    this.one = db.prepare<[string], NamespaceSettingsRow>(`${SELECT} WHERE namespace = ?`);
    this.all = db.prepare<[], NamespaceSettingsRow>(`${SELECT} ORDER BY namespace`);
    this.save = db.prepare<[NamespaceSettingsRow]>(
      `INSERT INTO namespace_settings (namespace, queue_prefix, vhosts, updated_at)
       VALUES (@namespace, @queuePrefix, @vhosts, @updatedAt)
       ON CONFLICT (namespace) DO UPDATE SET
         queue_prefix = excluded.queue_prefix, vhosts = excluded.vhosts, updated_at = excluded.updated_at`,
    );
    this.key = db.prepare<[string], string>('SELECT value FROM manager_keys WHERE name = ?').pluck();
    this.insertKey = db.prepare<[string, string]>(
      'INSERT INTO manager_keys (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING',
    );
  }

  get(namespace: string): NamespaceSettings | undefined {
    const row = this.one.get(namespace);
    return row && settingsOf(row);
  }

  list(): NamespaceSettings[] {
    return this.all.all().map(settingsOf);
  }

  put(settings: NamespaceSettings): void {
    this.save.run(rowOf(settings));
  }

  /** The key stored under `name`, storing `candidate` first when there is none. */
  managerKey(name: string, candidate: string): string {
    this.insertKey.run(name, candidate);
    return this.key.get(name) as string;
  }
}
