import { type BuildOptions, build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { type BundleSettings, esbuildOptions } from '../../../infra/bundling.js';
import { handlerEntry } from '../../../infra/paths.js';
import type { BusKind } from '../../../infra/settings.js';

/** The handlers the stack bundles per bus (infra/switchyard-stack.ts). */
const HANDLERS: Record<BusKind, string[]> = {
  sqs: ['api', 'replies-sqs', 'timers', 'dead-letters', 'register-workflows'],
  rabbitmq: ['api', 'replies-mq', 'timers', 'register-workflows'],
};

/** What a Lambda bundle must never carry: the local host's SQLite (native code) and its HTTP server. */
const FORBIDDEN_INPUTS = [
  // X-Ray is bundled only with -c tracing=true
  /@aws-lambda-powertools\/tracer/,
  /aws-xray-sdk-core/,
  /better-sqlite3/,
  /functions\/local\//,
  /functions\/adapters\/sqlite-/,
  /prom-client/,
];

/** What the other bus needs and this one does not. */
const OTHER_BUS: Record<BusKind, RegExp[]> = {
  sqs: [/node_modules\/amqplib\//, /client-secrets-manager/, /functions\/adapters\/rabbitmq\//],
  rabbitmq: [/functions\/adapters\/sqs\/bus\.ts/, /functions\/aws\/sqs-bus-factory\.ts/],
};

async function bundle(name: string, settings: BundleSettings, overrides: BuildOptions = {}) {
  const result = await build({
    ...esbuildOptions(handlerEntry(name), settings),
    outfile: 'index.mjs',
    write: false,
    metafile: true,
    ...overrides,
  });
  const { outputFiles, metafile } = result;
  const script = outputFiles?.find((file) => file.path.endsWith('.mjs'));
  if (!outputFiles || !script || !metafile) throw new Error(`esbuild produced nothing for ${name}`);
  return {
    text: script.text,
    bytes: script.contents.length,
    inputs: Object.keys(metafile.inputs),
    outputs: outputFiles.map((file) => file.path),
  };
}

describe.each(['sqs', 'rabbitmq'] as const)('Lambda bundles for BUS=%s', (bus) => {
  it.each(HANDLERS[bus])('bundles %s without SQLite, an HTTP server or the other bus', async (name) => {
    // Act
    const { text, bytes, inputs, outputs } = await bundle(name, { bus, tracing: false, sourceMaps: false });

    // Assess
    for (const forbidden of [...FORBIDDEN_INPUTS, ...OTHER_BUS[bus]]) {
      expect(
        inputs.filter((input) => forbidden.test(input)),
        `${name} bundles ${forbidden}`,
      ).toEqual([]);
    }
    expect(text).not.toMatch(/better-sqlite3/);
    expect(text, `${name} starts an HTTP server`).not.toMatch(/\bcreateServer\b/);
    expect(outputs.filter((path) => path.endsWith('.map'))).toEqual([]);
    expect(text).not.toMatch(/sourceMappingURL/);
    // 1.5 MiB until Ajv (signal schemas, issue 30) added about 150 KB to every bundle with the manager.
    expect(bytes).toBeLessThan(1.75 * 1024 * 1024);
  });
});

describe.each(['sqs', 'rabbitmq'] as const)('Lambda bundles for BUS=%s: workflow schedules', (bus) => {
  it.each(['api', 'timers', 'register-workflows'])(
    'bundles %s with the EventBridge Scheduler client (it syncs or re-arms schedules)',
    async (name) => {
      // Act
      const { inputs } = await bundle(name, { bus, tracing: false, sourceMaps: false });

      // Assess
      expect(inputs.some((input) => /@aws-sdk\/client-scheduler\//.test(input))).toBe(true);
      expect(inputs).toContain('functions/aws/eventbridge-schedules.ts');
    },
  );
});

describe('Lambda bundles', () => {
  it('the API authorizer carries the token lookup only: neither bus, nor the manager, nor the whole store', async () => {
    // Act
    const { text, inputs } = await bundle('api-authorizer', {
      bus: 'sqs',
      tracing: false,
      sourceMaps: false,
    });

    // Assess
    for (const forbidden of [
      ...FORBIDDEN_INPUTS,
      /node_modules\/amqplib\//,
      /client-sqs/,
      /functions\/manager\//,
      /functions\/adapters\/dynamodb\/store\.ts/,
    ])
      expect(
        inputs.filter((input) => forbidden.test(input)),
        `bundles ${forbidden}`,
      ).toEqual([]);
    expect(text, 'starts an HTTP server').not.toMatch(/\bcreateServer\b/);
  });

  it('the API function for both buses carries both, each loaded on first use, when not told the bus', async () => {
    // Act: the handler as tests and tsx run it, with the bus unknown at build time
    const { inputs } = await bundle('api', { bus: 'sqs', tracing: false, sourceMaps: false }, { define: {} });

    // Assess
    expect(inputs.some((input) => /node_modules\/amqplib\//.test(input))).toBe(true);
    expect(inputs.some((input) => /functions\/adapters\/sqs\/bus\.ts/.test(input))).toBe(true);
  });

  it('-c sourceMaps=true ships a source map linked from the bundle', async () => {
    // Act
    const { text, outputs } = await bundle('timers', { bus: 'sqs', tracing: false, sourceMaps: true });

    // Assess
    expect(outputs.filter((path) => path.endsWith('.map'))).toHaveLength(1);
    expect(text).toMatch(/sourceMappingURL=/);
  });

  it('-c tracing=true bundles Powertools Tracer, loaded on first use', async () => {
    // Act
    const { inputs } = await bundle('replies-sqs', { bus: 'sqs', tracing: true, sourceMaps: false });

    // Assess
    expect(inputs.some((input) => /@aws-lambda-powertools\/tracer\//.test(input))).toBe(true);
    expect(inputs.some((input) => /aws-xray-sdk-core\//.test(input))).toBe(true);
  });
});
