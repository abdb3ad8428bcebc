import { type BusFactory, type Container, createContainer } from './container.js';
import { type BusKind, readHandlerEnvironment } from './environment.js';
import { lazy } from './lazy.js';
import type { Tracing } from './tracing.js';

/**
 * X-Ray through Powertools Tracer, when `SWITCHYARD_TRACING` is `true`. The stack writes the value into
 * each bundle (infra/bundling.ts): off, the import below is dead code and the tracer is not shipped.
 */
async function loadTracing(): Promise<Tracing | undefined> {
  // The import inside the branch: esbuild drops a dynamic import only from a branch it folds away.
  if (process.env.SWITCHYARD_TRACING === 'true') return (await import('./tracing.js')).createTracing();
  return undefined;
}

/**
 * A handler built on first use from `process.env` and kept for the container's life, with the buses
 * the function can run with. A build that fails (a wrong environment, an unreadable secret) is tried
 * again by the next invocation.
 */
export function fromEnvironment<A extends unknown[], R>(
  buses: Partial<Record<BusKind, BusFactory>>,
  build: (container: Container) => ((...args: A) => Promise<R>) | Promise<(...args: A) => Promise<R>>,
): () => Promise<(...args: A) => Promise<R>> {
  return lazy(async () => {
    const tracing = await loadTracing();
    const container = await createContainer(readHandlerEnvironment(), {
      buses,
      captureClient: tracing?.captureClient,
    });
    const handler = await build(container);
    return tracing ? tracing.traceHandler(handler) : handler;
  });
}
