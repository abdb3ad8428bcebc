/**
 * A value built on first use and then kept for the container's life (SDK clients, connections, the
 * manager). A build that fails is not kept: the next invocation tries again.
 */
export function lazy<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= build().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
