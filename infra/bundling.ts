import type { BuildOptions } from 'esbuild';
import type { BusKind } from './settings.js';

/** What a function's bundle depends on: the same handler is bundled differently per deployment. */
export interface BundleSettings {
  bus: BusKind;
  /** X-Ray through Powertools Tracer (functions/aws/tracing.ts); off, the tracer is not in the bundle. */
  tracing: boolean;
  /** Ship a source map, and have Node read it (`NODE_OPTIONS=--enable-source-maps`). */
  sourceMaps: boolean;
  /** `-c secretsPrefix`: `params` secrets from Secrets Manager; unset, its client is not in the bundles. */
  secretsPrefix?: string;
}

/** The Node version the bundles are for: the Lambda runtime, nodejs24.x. */
export const BUNDLE_TARGET = 'node24';

/** CommonJS dependencies bundled into ESM still call require() for Node built-ins. */
export const BUNDLE_BANNER =
  "import { createRequire as __switchyardCreateRequire } from 'node:module'; const require = __switchyardCreateRequire(import.meta.url);";

/**
 * Constants esbuild writes into the bundle in place of the expressions: code that depends on them
 * folds away, with the modules only it imports (functions/aws/bus-factories.ts, from-env.ts).
 */
export function bundleDefines(settings: BundleSettings): Record<string, string> {
  return {
    'process.env.SWITCHYARD_BUNDLED_BUS': JSON.stringify(settings.bus),
    'process.env.SWITCHYARD_TRACING': JSON.stringify(String(settings.tracing)),
    'process.env.SWITCHYARD_BUNDLED_SECRETS': JSON.stringify(String(settings.secretsPrefix !== undefined)),
  };
}

/** The environment a bundle needs at run time: source maps are read only when shipped. */
export function bundleEnvironment(settings: BundleSettings): Record<string, string> {
  return settings.sourceMaps ? { NODE_OPTIONS: '--enable-source-maps' } : {};
}

/**
 * The esbuild options NodejsFunction builds the handler `entry` with (infra/constructs/handler-function.ts
 * passes the same values), for the bundle test and bench/bundles.ts to build exactly what is shipped.
 */
export function esbuildOptions(entry: string, settings: BundleSettings): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: BUNDLE_TARGET,
    mainFields: ['module', 'main'],
    minify: true,
    sourcemap: settings.sourceMaps,
    sourcesContent: false,
    define: bundleDefines(settings),
    banner: { js: BUNDLE_BANNER },
    logLevel: 'silent',
  };
}
