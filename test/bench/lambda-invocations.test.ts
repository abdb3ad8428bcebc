import { describe, expect, it } from 'vitest';
import { AwsWaitClock } from '../../bench/aws-call-latency.js';
import {
  cpuStretch,
  InvocationRunner,
  type Invocations,
  noInvocations,
} from '../../bench/lambda-invocations.js';

/** Two invocations started together, each awaiting `gate` once; returns the order of their starts and ends. */
async function twoAtOnce(runner: InvocationRunner, record: Invocations): Promise<string[]> {
  const events: string[] = [];
  const invocation = (name: string) =>
    runner.run(record, 1024, async () => {
      events.push(`${name} starts`);
      await new Promise((resolve) => setImmediate(resolve));
      events.push(`${name} ends`);
    });
  await Promise.all([invocation('a'), invocation('b')]);
  return events;
}

/** A clock the test moves by hand. */
function manualClock() {
  let at = 0;
  return {
    now: () => at,
    advance(ms: number) {
      at += ms;
    },
  };
}

describe('The simulation’s Lambda invocations', () => {
  it('run one at a time when asked, each counted with its billed duration', async () => {
    const runner = new InvocationRunner(new AwsWaitClock());
    runner.oneAtATime = true;
    const record = noInvocations();

    const events = await twoAtOnce(runner, record);

    expect(events).toEqual(['a starts', 'a ends', 'b starts', 'b ends']);
    expect(record.count).toBe(2);
    // Each is billed at least 1 ms, as Lambda rounds up.
    expect(record.billedMs).toBeGreaterThanOrEqual(2);
  });

  it('overlap otherwise, as they would in one process', async () => {
    const runner = new InvocationRunner(new AwsWaitClock());
    const record = noInvocations();

    const events = await twoAtOnce(runner, record);

    expect(events).toEqual(['a starts', 'b starts', 'a ends', 'b ends']);
    expect(record.count).toBe(2);
  });

  it('lets the next invocation run after one that threw', async () => {
    const runner = new InvocationRunner(new AwsWaitClock());
    runner.oneAtATime = true;
    const record = noInvocations();

    const failed = runner.run(record, 1024, async () => {
      throw new Error('the handler failed');
    });
    const next = runner.run(record, 1024, async () => 'answered');

    await expect(failed).rejects.toThrow('the handler failed');
    await expect(next).resolves.toBe('answered');
    expect(record.count).toBe(2);
  });

  it("bill the time spent waiting on AWS as it is, and the function's own work at its memory's share of a vCPU", async () => {
    const clock = manualClock();
    const waits = new AwsWaitClock(clock.now);
    const runner = new InvocationRunner(waits, clock.now);
    runner.oneAtATime = true;
    const record = noInvocations();

    await runner.run(record, 1024, async () => {
      clock.advance(4); // its own work
      waits.begin(); // two calls at once: 10 ms of waiting, not 16
      waits.begin();
      clock.advance(6);
      waits.end();
      clock.advance(4);
      waits.end();
      clock.advance(2); // its own work again
    });

    expect(record).toEqual({
      count: 1,
      awsWaitMs: 10,
      ownMs: 6,
      billedMs: Math.ceil(10 + 6 * (1769 / 1024)),
    });
  });

  it('stretch the work by 1,769 MB over the memory, and not at all from one vCPU up', () => {
    // "At 1,769 MB, a function has the equivalent of one vCPU"
    // (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
    expect(cpuStretch(1769)).toBe(1);
    expect(cpuStretch(4096)).toBe(1);
    expect(cpuStretch(512)).toBeCloseTo(3.455, 3);
  });
});
