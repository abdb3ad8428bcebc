import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { createLambdaTelemetry } from '../../../functions/aws/lambda-telemetry.js';
import { aLambdaContext } from '../../support/aws-events.js';

let written: string[];
let spies: MockInstance[];

/** Powertools writes through a Console of its own on stdout (info, EMF) and stderr (warn, error). */
beforeEach(() => {
  written = [];
  spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    }),
  );
});

afterEach(() => {
  for (const spy of spies) spy.mockRestore();
});

function jsonLines(): Record<string, unknown>[] {
  return written
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('Function: createLambdaTelemetry', () => {
  it('logs JSON lines with the local logger field names, filtered by level', () => {
    // Prepare
    const telemetry = createLambdaTelemetry({ logLevel: 'info', serviceName: 'switchyard-test' });
    telemetry.startInvocation(aLambdaContext(60_000, 'switchyard-replies'));

    // Act
    telemetry.logger.debug('not shown', { jobId: 'j' });
    telemetry.logger.warn('attempt failed', {
      jobId: 'a6f1c0de-0000-4000-8000-000000000001',
      step: 'count',
      attempt: 2,
      correlationId: 'a6f1c0de-0000-4000-8000-000000000001:count',
      durationMs: 12,
      skipped: undefined,
    });

    // Assess
    const lines = jsonLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'WARN',
      message: 'attempt failed',
      service: 'switchyard-test',
      function_name: 'switchyard-replies',
      jobId: 'a6f1c0de-0000-4000-8000-000000000001',
      step: 'count',
      attempt: 2,
      correlationId: 'a6f1c0de-0000-4000-8000-000000000001:count',
      durationMs: 12,
    });
    expect(lines[0]).not.toHaveProperty('skipped');
  });

  it('writes the counts of an invocation as one EMF line with only the service dimension', () => {
    // Prepare
    const telemetry = createLambdaTelemetry({
      logLevel: 'info',
      serviceName: 'switchyard',
      namespace: 'Switchyard',
    });

    // Act
    telemetry.metrics.count('jobs_finished_total', { status: 'failed' });
    telemetry.metrics.count('jobs_finished_total', { status: 'failed' });
    telemetry.metrics.count('jobs_started_total', { workflow: 'book-word-counts' });
    telemetry.metrics.observe('step_duration_seconds', 1.5);
    telemetry.flush();
    telemetry.flush();

    // Assess
    const lines = jsonLines().filter((line) => '_aws' in line);
    expect(lines).toHaveLength(1);
    const emf = lines[0] as Record<string, unknown> & {
      _aws: {
        CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }[];
      };
    };
    const [directive] = emf._aws.CloudWatchMetrics;
    expect(directive?.Namespace).toBe('Switchyard');
    expect(directive?.Dimensions).toEqual([['service']]);
    expect(directive?.Metrics.map((metric) => metric.Name).sort()).toEqual([
      'JobsFailed',
      'JobsStarted',
      'StepDuration',
    ]);
    expect(emf).toMatchObject({ service: 'switchyard', JobsFailed: 2, JobsStarted: 1, StepDuration: 1.5 });
    expect(emf).not.toHaveProperty('workflow');
  });
});
