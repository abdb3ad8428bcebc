import type { Context } from 'aws-lambda';
import type { LambdaTelemetry } from '../../functions/aws/lambda-telemetry.js';
import type { CounterName, LogFields, LogLevel } from '../../functions/telemetry/telemetry.js';

export interface RecordedLog {
  level: LogLevel;
  message: string;
  fields?: LogFields;
}

/** Lambda telemetry that keeps what it is told, for assertions. */
export interface RecordingTelemetry extends LambdaTelemetry {
  logs: RecordedLog[];
  contexts: Context[];
  flushes: number;
  /** The sum of a counter, over every label, or over those whose labels include `labels`. */
  counted(name: CounterName, labels?: Record<string, string>): number;
  logged(message: string): RecordedLog[];
}

export function recordingTelemetry(): RecordingTelemetry {
  const logs: RecordedLog[] = [];
  const counts: { name: CounterName; labels: Record<string, string>; value: number }[] = [];
  const log =
    (level: LogLevel) =>
    (message: string, fields?: LogFields): void => {
      logs.push({ level, message, fields });
    };
  const telemetry: RecordingTelemetry = {
    logs,
    contexts: [],
    flushes: 0,
    logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
    metrics: {
      count: (name, labels = {}, value = 1) => counts.push({ name, labels, value }),
      observe: () => {},
    },
    startInvocation(context) {
      if (context) telemetry.contexts.push(context);
    },
    flush() {
      telemetry.flushes++;
    },
    counted: (name, labels = {}) =>
      counts
        .filter(
          (entry) =>
            entry.name === name &&
            Object.entries(labels).every(([key, value]) => entry.labels[key] === value),
        )
        .reduce((sum, entry) => sum + entry.value, 0),
    logged: (message) => logs.filter((entry) => entry.message === message),
  };
  return telemetry;
}
