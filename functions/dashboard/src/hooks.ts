import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiClient, AuthRequiredError } from './api-client.js';

export const ApiContext = createContext<ApiClient | undefined>(undefined);

export function useApi(): ApiClient {
  const client = useContext(ApiContext);
  if (!client) throw new Error('useApi outside <ApiContext.Provider>');
  return client;
}

export interface Resource<T> {
  data?: T;
  error?: Error;
  loading: boolean;
  /** When the data was last fetched (ms). */
  fetchedAt?: number;
  reload(): void;
}

/**
 * Fetches on mount and whenever `key` changes; with `refreshMs`, again every so often while mounted
 * (keeping the data shown meanwhile); and again, keeping the data too, whenever `reloadOn` changes
 * (something the page did that the resource shows). A credential prompt stops it: the view unmounts.
 */
export function useResource<T>(
  load: (client: ApiClient, signal: AbortSignal) => Promise<T>,
  key: string,
  refreshMs?: number,
  reloadOn?: unknown,
): Resource<T> {
  const client = useApi();
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean; fetchedAt?: number }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;
  const lastKey = useRef(key);

  useEffect(() => {
    const controller = new AbortController();
    const keyChanged = lastKey.current !== key;
    lastKey.current = key;
    setState((previous) => ({ ...(keyChanged ? {} : previous), loading: true }));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const scheduleRefresh = () => {
      if (refreshMs) timer = setTimeout(() => setTick((n) => n + 1), refreshMs);
    };
    loadRef.current(client, controller.signal).then(
      (data) => {
        if (controller.signal.aborted) return;
        setState({ data, loading: false, fetchedAt: Date.now() });
        scheduleRefresh();
      },
      (error: Error) => {
        if (controller.signal.aborted || error instanceof AuthRequiredError) return;
        setState((previous) => ({ ...previous, error, loading: false }));
        scheduleRefresh();
      },
    );
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, key, tick, refreshMs, reloadOn]);

  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

/** The current time, ticking every `everyMs`: relative times stay true. */
export function useNow(everyMs = 5000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs]);
  return now;
}

/** Runs one action at a time (cancel, retry, signal), keeping its error to show. */
export function useAction(): {
  busy: boolean;
  error?: Error;
  run(action: () => Promise<void>): Promise<void>;
  clear(): void;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error>();
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      if (!(caught instanceof AuthRequiredError)) setError(caught as Error);
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}
