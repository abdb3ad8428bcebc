import type { LogFields, Logger, LogLevel } from './telemetry.js';

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function parseLogLevel(value: string | undefined, fallback: LogLevel = 'info'): LogLevel {
  const level = value?.trim().toLowerCase();
  if (level === 'warning') return 'warn';
  return level && level in RANK ? (level as LogLevel) : fallback;
}

/** One JSON object per line: time, level, message and the event's fields; filtered by `LOG_LEVEL`. */
export function createJsonLogger(options: {
  level?: LogLevel;
  service?: string;
  write?: (line: string) => void;
}): Logger {
  const threshold = RANK[options.level ?? parseLogLevel(process.env.LOG_LEVEL)];
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (RANK[level] < threshold) return;
    const line: Record<string, unknown> = {
      time: new Date().toISOString(),
      level,
      service: options.service ?? 'switchyard',
      message,
    };
    if (fields) {
      for (const [key, value] of Object.entries(fields)) {
        if (value === undefined) continue;
        line[key] = value instanceof Error ? { name: value.name, message: value.message } : value;
      }
    }
    write(JSON.stringify(line));
  };
  return {
    debug: (message, fields) => emit('debug', message, fields),
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}
