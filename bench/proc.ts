import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';

/*
 * What a process costs, read from Linux's /proc: CPU seconds (utime + stime of /proc/<pid>/stat,
 * children not included) and peak resident memory (VmHWM of /proc/<pid>/status, the high-water
 * mark since the process started).
 */

/** Clock ticks per second of /proc/<pid>/stat (getconf CLK_TCK: 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far; undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / TICKS_PER_SECOND;
}

function statusKb(pid: number, field: 'VmHWM' | 'VmRSS'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Peak resident memory of a process since it started, in MB. */
export function peakRssMb(pid: number): number | undefined {
  const kb = statusKb(pid, 'VmHWM');
  return kb === undefined ? undefined : kb / 1024;
}

/** Resident memory now, in MB. */
export function rssMb(pid: number): number | undefined {
  const kb = statusKb(pid, 'VmRSS');
  return kb === undefined ? undefined : kb / 1024;
}

/** Pids whose command name (/proc/<pid>/comm) is `name`, e.g. RabbitMQ's `beam.smp`. */
export function pidsNamed(name: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === name) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** CPU seconds every core of the machine has spent busy since boot (/proc/stat, all but idle and iowait). */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [, ...ticks] = line.trim().split(/\s+/).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

export type CpuByRole = Record<string, number>;

/**
 * CPU seconds used by named processes over a window: `start()` when the workload starts, `stop()`
 * when it ends. A process that exits inside the window is counted up to its last reading.
 */
export class CpuWindow {
  private readonly first = new Map<string, number>();
  private readonly last = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly startedAt = process.hrtime.bigint();
  private readonly driverStart = process.cpuUsage();
  private readonly machineStart = machineBusySeconds();

  constructor(private readonly pids: Record<string, number[]>) {
    for (const role of Object.keys(pids)) {
      const sum = this.read(role);
      this.first.set(role, sum);
      this.last.set(role, sum);
    }
    // Keep a recent reading so that a process that dies mid-window still counts.
    this.timer = setInterval(() => this.sample(), 500);
    this.timer.unref();
  }

  private read(role: string): number {
    return (this.pids[role] ?? []).reduce((sum, pid) => sum + (cpuSeconds(pid) ?? 0), 0);
  }

  private sample(): void {
    for (const role of Object.keys(this.pids)) {
      const now = this.read(role);
      if (now >= (this.last.get(role) ?? 0)) this.last.set(role, now);
    }
  }

  /**
   * CPU seconds per role, plus `driver` (this process), `others` (every other process on the
   * machine: how busy it was with work that is not the benchmark's) and `wallSeconds`.
   */
  stop(): CpuByRole {
    clearInterval(this.timer);
    this.sample();
    const result: CpuByRole = {};
    for (const role of Object.keys(this.pids))
      result[role] = (this.last.get(role) ?? 0) - (this.first.get(role) ?? 0);
    const driver = process.cpuUsage(this.driverStart);
    result.driver = (driver.user + driver.system) / 1e6;
    const ours = Object.values(result).reduce((sum, seconds) => sum + seconds, 0);
    result.others = Math.max(0, machineBusySeconds() - this.machineStart - ours);
    result.wallSeconds = Number(process.hrtime.bigint() - this.startedAt) / 1e9;
    return result;
  }
}

/** CPU seconds by process for a progress line: `serve 4.8 workers 1.3 …`. */
export const cpuLine = (cpuSeconds: CpuByRole): string =>
  Object.entries(cpuSeconds)
    .map(([role, seconds]) => `${role} ${seconds.toFixed(1)}`)
    .join(' ');

/** The 1-minute load average, for the report to say how busy the machine was. */
export function loadAverage(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

/**
 * Resets this process's VmHWM to its current RSS (Linux: "5" into /proc/self/clear_refs), so that
 * `peakRssMb(process.pid)` afterwards is the peak of what runs next. False where not allowed.
 */
export function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
