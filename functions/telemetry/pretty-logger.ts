import { parseLogLevel } from './json-logger.js';
import type { LogFields, Logger, LogLevel } from './telemetry.js';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A field's value on a log line: strings as they are (quoted when they hold spaces), the rest as JSON. */
function show(value: unknown): string {
  if (value instanceof Error) return show(value.message);
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join(',') || '[]';
  return JSON.stringify(value);
}

/**
 * Log lines for people at a terminal: `22:47:23 WARN  message  key=value …`, the level coloured
 * when `colour` says so; filtered by `LOG_LEVEL` as the JSON logger is. `skip` leaves out messages
 * the caller says otherwise (serve's start-up line).
 */
export function createPrettyLogger(options: {
  level?: LogLevel;
  colour?: boolean;
  write?: (line: string) => void;
  skip?: (message: string) => boolean;
}): Logger {
  const threshold = RANK[options.level ?? parseLogLevel(process.env.LOG_LEVEL)];
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const colours: Record<LogLevel, number> = { debug: 2, info: 36, warn: 33, error: 31 };
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (RANK[level] < threshold || options.skip?.(message)) return;
    const time = new Date().toTimeString().slice(0, 8);
    const name = level.toUpperCase().padEnd(5);
    const tag = options.colour ? `\u001b[${colours[level]}m${name}\u001b[0m` : name;
    const extra = Object.entries(fields ?? {})
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${show(value)}`)
      .join(' ');
    write(
      `${time} ${tag} ${message}${extra ? `  ${options.colour ? `\u001b[2m${extra}\u001b[0m` : extra}` : ''}`,
    );
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}
