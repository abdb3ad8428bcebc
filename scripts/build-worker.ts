import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * `npm run build:worker`: the worker SDK as plain JavaScript, the files package.json's `exports`
 * give `switchyard/worker` (dist/worker/index.js), `switchyard/worker/sqs` (dist/worker/sqs.js) and
 * `switchyard/worker/lambda` (dist/worker/lambda.js),
 * so a worker imports it by the package's name and runs on node with or without tsx. The types are
 * the sources' own (`types` in `exports`). Packages stay external (amqplib, the AWS SDK, Powertools).
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WORKER_DIST = join(root, 'dist/worker');

export async function buildWorker(): Promise<string[]> {
  const result = await build({
    entryPoints: {
      index: join(root, 'functions/worker/index.ts'),
      sqs: join(root, 'functions/worker/transports/sqs.ts'),
      lambda: join(root, 'functions/worker/lambda/index.ts'),
    },
    bundle: true,
    splitting: true,
    outdir: WORKER_DIST,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  buildWorker().then(
    (outputs) =>
      console.log(
        `worker SDK built in ${Date.now() - started} ms -> ${outputs.map((file) => relative(root, join(root, file))).join(', ')}`,
      ),
    (error: Error) => {
      console.error(`build:worker failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
