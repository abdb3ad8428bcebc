import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import Database from 'better-sqlite3';
import { bullmqVersion, redisServerVersion } from './bullmq.js';
import { uncommittedFiles } from './source-tree.js';

/** The machine a run was measured on, for the report. */
export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  node: string;
  rabbitmq: string;
  redis: string;
  sqlite: string;
  bullmq: string;
  kernel: string;
  gitCommit: string;
  /** Files that differed from the commit when the run started (absent in older results). */
  uncommittedFiles?: string[];
}

function run(command: string, args: string[]): string {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

function cpuModel(): string {
  try {
    return (
      readFileSync('/proc/cpuinfo', 'utf8')
        .match(/^model name\s*:\s*(.+)$/m)?.[1]
        ?.trim() ?? 'unknown'
    );
  } catch {
    return cpus()[0]?.model ?? 'unknown';
  }
}

export function describeMachine(): Machine {
  const db = new Database(':memory:');
  const sqlite = (db.prepare('select sqlite_version() as v').get() as { v: string }).v;
  db.close();
  return {
    cpu: cpuModel(),
    cores: cpus().length,
    memoryGb: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    rabbitmq: run('rabbitmqctl', ['-q', 'version']),
    redis: redisServerVersion(),
    sqlite: `${sqlite} (better-sqlite3)`,
    bullmq: bullmqVersion(),
    kernel: run('uname', ['-r']),
    gitCommit: run('git', ['rev-parse', '--short', 'HEAD']),
    uncommittedFiles: uncommittedFiles(),
  };
}
