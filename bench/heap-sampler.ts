import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { rssMb } from './proc.js';

/*
 * Where serve's memory goes, from inside serve (bench/serve-entry.ts with BENCH_HEAP_PROFILE_DIR),
 * with V8's sampling heap profiler, in one of two modes (BENCH_HEAP_MODE):
 * - `live`: what is in the heap when it is fullest: each time V8's used heap passes its previous
 *   high by 32 MB, the live objects are written to `<dir>/live-at-peak.heapprofile`;
 * - `allocations`: everything allocated from start-up, collected objects included.
 * Either way process.memoryUsage() is read every 50 ms, keeping the highest value of each figure;
 * SIGUSR2 writes `<dir>/memory-at-peak.json` (and, for `allocations`, `<dir>/allocations.heapprofile`).
 */
export function startHeapSampler(dir: string, mode: 'live' | 'allocations'): void {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 128 * 1024,
    includeObjectsCollectedByMajorGC: mode === 'allocations',
    includeObjectsCollectedByMinorGC: mode === 'allocations',
  });
  const writeProfile = (name: string, then?: () => void) =>
    session.post('HeapProfiler.getSamplingProfile', (error, result) => {
      if (!error) writeFileSync(join(dir, name), JSON.stringify(result.profile));
      then?.();
    });
  const peak: Record<string, number> = {};
  let snapshotAt = 64 * 1024 * 1024;
  const timer = setInterval(() => {
    const now: Record<string, number> = {
      ...process.memoryUsage(),
      rss: (rssMb(process.pid) ?? 0) * 1024 * 1024,
    };
    for (const [key, bytes] of Object.entries(now)) peak[key] = Math.max(peak[key] ?? 0, bytes);
    if (mode === 'live' && now.heapUsed !== undefined && now.heapUsed > snapshotAt) {
      snapshotAt = now.heapUsed + 32 * 1024 * 1024;
      writeProfile('live-at-peak.heapprofile');
    }
  }, 50);
  timer.unref();
  const writePeak = () => writeFileSync(join(dir, 'memory-at-peak.json'), JSON.stringify(peak));
  process.on('SIGUSR2', () => {
    if (mode === 'allocations') writeProfile('allocations.heapprofile', writePeak);
    else writePeak();
  });
}
