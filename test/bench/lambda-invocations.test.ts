import { describe, expect, it } from 'vitest';
import { InvocationRunner, type Invocations } from '../../bench/lambda-invocations.js';

/** Two invocations started together, each awaiting `gate` once; returns the order of their starts and ends. */
async function twoAtOnce(runner: InvocationRunner, record: Invocations): Promise<string[]> {
  const events: string[] = [];
  const invocation = (name: string) =>
    runner.run(record, async () => {
      events.push(`${name} starts`);
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`${name} ends`);
    });
  await Promise.all([invocation('a'), invocation('b')]);
  return events;
}

describe('The simulation’s Lambda invocations', () => {
  it('run one at a time when asked, each counted with its billed duration', async () => {
    const runner = new InvocationRunner();
    runner.oneAtATime = true;
    const record: Invocations = { count: 0, billedMs: 0 };

    const events = await twoAtOnce(runner, record);

    expect(events).toEqual(['a starts', 'a ends', 'b starts', 'b ends']);
    expect(record.count).toBe(2);
    // Each is billed at least 1 ms, as Lambda rounds up.
    expect(record.billedMs).toBeGreaterThanOrEqual(2);
  });

  it('overlap otherwise, as they would in one process', async () => {
    const runner = new InvocationRunner();
    const record: Invocations = { count: 0, billedMs: 0 };

    const events = await twoAtOnce(runner, record);

    expect(events).toEqual(['a starts', 'b starts', 'a ends', 'b ends']);
    expect(record.count).toBe(2);
  });

  it('lets the next invocation run after one that threw', async () => {
    const runner = new InvocationRunner();
    runner.oneAtATime = true;
    const record: Invocations = { count: 0, billedMs: 0 };

    const failed = runner.run(record, async () => {
      throw new Error('the handler failed');
    });
    const next = runner.run(record, async () => 'answered');

    await expect(failed).rejects.toThrow('the handler failed');
    await expect(next).resolves.toBe('answered');
    expect(record.count).toBe(2);
  });
});
