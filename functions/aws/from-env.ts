import { type BusFactory, type Container, createContainer } from './container.js';
import { type BusKind, readHandlerEnvironment } from './environment.js';
import { lazy } from './lazy.js';

/**
 * A handler built on first use from `process.env` and kept for the container's life, with the buses
 * the function can run with. A build that fails (a wrong environment, an unreadable secret) is tried
 * again by the next invocation.
 */
export function fromEnvironment<T>(
  buses: Partial<Record<BusKind, BusFactory>>,
  build: (container: Container) => T | Promise<T>,
): () => Promise<T> {
  return lazy(async () => build(await createContainer(readHandlerEnvironment(), { buses })));
}
