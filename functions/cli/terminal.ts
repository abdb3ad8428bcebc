import { CliError } from './client.js';

/**
 * What the command line knows of the terminal it writes to: colour only on a terminal and never with
 * `NO_COLOR` (https://no-color.org); `FORCE_COLOR=1` asks for it anyway (CI logs that render it).
 */

/** Whether text written to `stream` may carry colour. */
export function colourFor(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (env.NO_COLOR) return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
  return stream.isTTY === true && env.TERM !== 'dumb';
}

export interface Paint {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  /** A job's or step's status in its colour: completed green, failed red, running cyan… */
  status(status: string, text?: string): string;
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** Colours, or the identity when colour is off. */
export function paint(enabled = colourFor()): Paint {
  const same = (text: string) => text;
  const bold = enabled ? sgr(1, 22) : same;
  const dim = enabled ? sgr(2, 22) : same;
  const red = enabled ? sgr(31, 39) : same;
  const green = enabled ? sgr(32, 39) : same;
  const yellow = enabled ? sgr(33, 39) : same;
  const cyan = enabled ? sgr(36, 39) : same;
  const byStatus: Record<string, (text: string) => string> = {
    completed: green,
    ok: green,
    running: cyan,
    waiting: dim,
    scheduled: dim,
    queued: dim,
    skipped: dim,
    paused: yellow,
    cancelled: yellow,
    failed: red,
    aborted: red,
  };
  return {
    enabled,
    bold,
    dim,
    red,
    green,
    yellow,
    cyan,
    status: (status, text = status) => (byStatus[status] ?? same)(text),
  };
}

/** The visible width of a text that may hold colour codes. */
export function visibleLength(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape character is what is matched
  return text.replace(/\u001b\[[0-9;]*m/g, '').length;
}

/** Pads to a visible width, colour codes aside. */
export function padVisible(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleLength(text)));
}

/**
 * A table with a header row, columns two spaces apart, the last one not padded. Cells may be
 * coloured; the header is bold when colour is on.
 */
export function renderTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  p: Paint,
): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => visibleLength(row[column] ?? ''))),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : padVisible(cell, widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [p.bold(line(header)), ...rows.map(line)].join('\n');
}

/** `-o json|table`: how a listing is printed. */
export type OutputFormat = 'json' | 'table';

export function outputFormat(value: string | undefined): OutputFormat {
  const format = (value ?? 'table').toLowerCase();
  if (format !== 'json' && format !== 'table') {
    throw new CliError(`-o must be json or table, got "${value}"`);
  }
  return format;
}

/** `1.2s`, `850ms`, `3m 05s`, `2h 04m`: a duration as people read it. */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(minutes / 1440)}d ${Math.floor((minutes % 1440) / 60)}h`;
}
