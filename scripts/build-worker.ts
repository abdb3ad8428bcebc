import { execFile } from 'node:child_process';
import { cp, mkdir, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';

/**
 * `npm run build:worker`: the worker SDK as the package `switchyard-worker` (packages/worker), which
 * `npm run pack:worker` packs. Plain JavaScript, ES modules (CommonJS projects `require()` them:
 * Node 20.19 and 22.12 onwards load ES modules that way), one file per entry of its `exports`
 * (`switchyard-worker`, `switchyard-worker/sqs`, `switchyard-worker/lambda`) and the chunks they
 * share, so that a class such as WorkerError exists once whichever entry a worker imports. Packages
 * stay external (amqplib, and the optional AWS SDK and Powertools). The types are declarations that
 * tsc emits from the sources (packages/worker/tsconfig.json), so a worker's own tsc checks its code
 * against them, never Switchyard's sources.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const WORKER_PACKAGE = join(root, 'packages/worker');
const run = promisify(execFile);

/**
 * Builds the package in packages/worker, or a copy of it in the folder `into` (the tests pack one
 * of their own, which no other build touches while they do).
 */
export async function buildWorker(into = WORKER_PACKAGE): Promise<string[]> {
  const dist = join(into, 'dist');
  if (into !== WORKER_PACKAGE) {
    await mkdir(into, { recursive: true });
    for (const file of ['package.json', 'README.md']) await cp(join(WORKER_PACKAGE, file), join(into, file));
  }
  // Chunk names change with their content: what an earlier build left would be packed too.
  await rm(dist, { recursive: true, force: true });
  const result = await build({
    entryPoints: {
      index: join(root, 'functions/worker/index.ts'),
      sqs: join(root, 'functions/worker/transports/sqs.ts'),
      lambda: join(root, 'functions/worker/lambda/index.ts'),
    },
    bundle: true,
    splitting: true,
    outdir: dist,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    metafile: true,
    logLevel: 'silent',
  });
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const declarations = ['-p', join(WORKER_PACKAGE, 'tsconfig.json'), '--outDir', join(dist, 'types')];
  await run(process.execPath, [tsc, ...declarations]).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc could not emit the SDK's declarations:\n${error.stdout ?? error.message}`);
  });
  return Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = Date.now();
  buildWorker().then(
    (outputs) =>
      console.log(
        `worker SDK built in ${Date.now() - started} ms -> ${outputs.map((file) => relative(root, join(root, file))).join(', ')} and its declarations`,
      ),
    (error: Error) => {
      console.error(`build:worker failed: ${error.message}`);
      process.exitCode = 1;
    },
  );
}
