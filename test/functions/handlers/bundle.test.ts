import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** The handlers the stack bundles (infra/constructs/handler-function.ts), with the stack's esbuild options. */
const HANDLERS = ['api', 'replies-sqs', 'replies-mq', 'timers', 'dead-letters', 'register-workflows'];

/** What a Lambda bundle must never carry: the local host's SQLite (native code) and its HTTP server. */
const FORBIDDEN_INPUTS = [
  /better-sqlite3/,
  /functions\/local\//,
  /functions\/adapters\/sqlite-/,
  /prom-client/,
];

/** Functions that run with one bus only carry that bus. */
const OTHER_BUS: Record<string, RegExp[]> = {
  'replies-sqs': [/node_modules\/amqplib\//, /client-secrets-manager/],
  'dead-letters': [/node_modules\/amqplib\//, /client-secrets-manager/],
  'replies-mq': [/functions\/adapters\/sqs\/bus\.ts/],
};

async function bundle(name: string) {
  const result = await build({
    entryPoints: [`functions/handlers/${name}.ts`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
    banner: {
      js: "import { createRequire as __switchyardCreateRequire } from 'node:module'; const require = __switchyardCreateRequire(import.meta.url);",
    },
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error(`esbuild produced nothing for ${name}`);
  return { text: output.text, bytes: output.contents.length, inputs: Object.keys(result.metafile.inputs) };
}

describe('Lambda bundles', () => {
  it.each(HANDLERS)('bundles %s without SQLite or an HTTP server', async (name) => {
    // Act
    const { text, bytes, inputs } = await bundle(name);

    // Assess
    console.info(`bundle ${name}: ${(bytes / 1024).toFixed(0)} KiB from ${inputs.length} files`);
    for (const forbidden of [...FORBIDDEN_INPUTS, ...(OTHER_BUS[name] ?? [])]) {
      expect(
        inputs.filter((input) => forbidden.test(input)),
        `${name} bundles ${forbidden}`,
      ).toEqual([]);
    }
    expect(text).not.toMatch(/better-sqlite3/);
    expect(text, `${name} starts an HTTP server`).not.toMatch(/\bcreateServer\b/);
    expect(bytes).toBeLessThan(1.5 * 1024 * 1024);
  });
});
