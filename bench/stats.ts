/** min / median / max of repeated measurements. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    min: sorted[0] ?? Number.NaN,
    median: sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN,
    max: sorted.at(-1) ?? Number.NaN,
  };
}

export function formatSpread(s: Spread, digits = 0, unit = ''): string {
  const f = (n: number) =>
    n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  return `${f(s.median)}${unit} (min ${f(s.min)}, max ${f(s.max)})`;
}

export async function repeat<T>(times: number, run: () => Promise<T> | T): Promise<T[]> {
  const results: T[] = [];
  for (let i = 0; i < times; i++) results.push(await run());
  return results;
}

/** Samples RSS every few milliseconds while `run` runs; returns its result and the peak. */
export async function withPeakRss<T>(run: () => Promise<T>): Promise<{ result: T; peakRssBytes: number }> {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await run();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, peakRssBytes: peak };
  } finally {
    clearInterval(timer);
  }
}

export const mb = (bytes: number): number => bytes / 1024 / 1024;
