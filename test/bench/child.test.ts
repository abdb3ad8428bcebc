import { describe, expect, it } from 'vitest';
import { spawnChild, whileRunning } from '../../bench/child.js';

/*
 * A benchmark's wait on serve ends when serve dies: it does not poll a dead process until the run's
 * timeout (which is over an hour for the largest fan-out).
 */

const node = (script: string) =>
  spawnChild({ name: 'toy serve', command: process.execPath, args: ['-e', script] });

describe('whileRunning', () => {
  it('rejects as soon as the process exits, naming it, while the work would wait for ever', async () => {
    const child = await node('setTimeout(() => process.exit(3), 200)');
    const forever = new Promise<never>(() => {});

    const began = Date.now();
    await expect(whileRunning(child, forever)).rejects.toThrow('toy serve exited (3) during the run');
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('rejects at once for a process that has already exited', async () => {
    const child = await node('process.exit(4)');
    await new Promise((resolve) => child.child.once('exit', resolve));

    await expect(whileRunning(child, new Promise<never>(() => {}))).rejects.toThrow('exited (4)');
  });

  it("gives the work's result while the process runs, and leaves it running", async () => {
    const child = await node('setTimeout(() => {}, 10_000)');
    try {
      await expect(whileRunning(child, Promise.resolve('done'))).resolves.toBe('done');
      expect(child.child.exitCode).toBeNull();
    } finally {
      await child.stop();
    }
  });
});
