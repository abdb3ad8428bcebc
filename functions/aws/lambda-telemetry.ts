import { Logger as PowertoolsLogger } from '@aws-lambda-powertools/logger';
import { Metrics as PowertoolsMetricsClient } from '@aws-lambda-powertools/metrics';
import type { Context } from 'aws-lambda';
import type { LogFields, Logger, LogLevel, Telemetry } from '../telemetry/telemetry.js';
import { PowertoolsMetrics } from './powertools-metrics.js';

/** Telemetry of one Lambda container: the manager's logger and metrics, plus what an invocation needs. */
export interface LambdaTelemetry extends Telemetry {
  /** Adds the invocation's request id and function name to the log lines that follow. */
  startInvocation(context?: Context): void;
  /** Writes the invocation's metrics (EMF); handlers call it before they return. */
  flush(): void;
}

export interface LambdaTelemetryOptions {
  logLevel: LogLevel;
  /** @default $POWERTOOLS_SERVICE_NAME, else `switchyard` */
  serviceName?: string;
  /** @default $POWERTOOLS_METRICS_NAMESPACE, else `Switchyard` */
  namespace?: string;
}

/**
 * Powertools Logger and Metrics behind the manager's Telemetry port. Log lines carry the same field
 * names as the local JSON logger (`jobId`, `step`, `attempt`, `correlationId`, `durationMs`).
 */
export function createLambdaTelemetry(options: LambdaTelemetryOptions): LambdaTelemetry {
  const serviceName = options.serviceName ?? process.env.POWERTOOLS_SERVICE_NAME ?? 'switchyard';
  const logger = new PowertoolsLogger({
    serviceName,
    logLevel: options.logLevel,
  });
  const metrics = new PowertoolsMetrics(
    new PowertoolsMetricsClient({
      serviceName,
      namespace: options.namespace ?? process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'Switchyard',
    }),
  );
  return {
    logger: powertoolsLogger(logger),
    metrics,
    startInvocation(context) {
      if (context) logger.addContext(context);
    },
    flush: () => metrics.flush(),
  };
}

/** The manager's Logger on a Powertools Logger: fields become keys of the JSON line. */
export function powertoolsLogger(logger: PowertoolsLogger): Logger {
  const fieldsOf = (fields?: LogFields): Record<string, unknown>[] => (fields ? [definedOnly(fields)] : []);
  return {
    debug: (message, fields) => logger.debug(message, ...fieldsOf(fields)),
    info: (message, fields) => logger.info(message, ...fieldsOf(fields)),
    warn: (message, fields) => logger.warn(message, ...fieldsOf(fields)),
    error: (message, fields) => logger.error(message, ...fieldsOf(fields)),
  };
}

function definedOnly(fields: LogFields): Record<string, unknown> {
  const defined: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) defined[key] = value;
  return defined;
}
