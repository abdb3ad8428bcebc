import { describe, expect, it } from 'vitest';
import { recordingTelemetry } from '../../support/recording-telemetry.js';
import { SimulatedWorld } from '../../support/simulated-world.js';

const BATCH = `workflows:
  - name: batch
    steps:
      - name: each
        task: per-item
      - name: after
        depends: [ each ]
    tasks:
      - name: per-item
        itemListKey: items
        steps:
          - name: work
            retries: 1
`;

async function world() {
  const telemetry = recordingTelemetry();
  const w = new SimulatedWorld(undefined, telemetry);
  await w.register(BATCH);
  return { w, telemetry };
}

/** The lines logged at INFO and above, as `LEVEL message`. */
const loud = (telemetry: ReturnType<typeof recordingTelemetry>) =>
  telemetry.logs.filter((log) => log.level !== 'debug').map((log) => `${log.level} ${log.message}`);

describe("Manager: a fan-out's log lines", () => {
  it("logs each child's course at DEBUG and the fan-out once at INFO, with its children's count", async () => {
    // Prepare
    const { w, telemetry } = await world();
    const id = await w.start('batch', { items: Array.from({ length: 50 }, (_, n) => n) });
    telemetry.logs.length = 0;

    // Act: one child fails once and is retried; all complete; the job is then paused and resumed.
    const children = w.take();
    await w.reply(children[0]!, { error: 'flaky' }, { type: 'error' });
    for (const request of [...children.slice(1), ...w.take()]) await w.reply(request, {});

    // Assess: the children completed, their lines at DEBUG only.
    expect(telemetry.logged('job completed').map((log) => log.level)).toEqual(Array(50).fill('debug'));
    expect(telemetry.logged('retry scheduled').map((log) => log.level)).toEqual(['debug']);
    expect(telemetry.logged('fan-out completed')).toEqual([
      {
        level: 'info',
        message: 'fan-out completed',
        fields: expect.objectContaining({ jobId: id, step: 'each', children: 50 }),
      },
    ]);
    // The one child attempt that failed is still a warning: someone may want to know.
    expect(loud(telemetry)).toEqual(['warn attempt failed', 'info fan-out completed']);

    // The top-level job's own course stays at INFO.
    await w.manager.pause(id);
    await w.manager.resume(id);
    await w.manager.drain();
    await w.reply(w.take()[0]!, {});
    expect(loud(telemetry).slice(2)).toEqual(['info job paused', 'info job resumed', 'info job completed']);
  });

  it("says a fan-out failed once, at WARN, naming the child; the child's own failure is DEBUG", async () => {
    const { w, telemetry } = await world();
    await w.start('batch', { items: [1, 2, 3] });
    telemetry.logs.length = 0;
    const [first] = w.take();
    await w.reply(first!, { error: 'bad item' }, { type: 'error', retryable: false });
    expect(telemetry.logged('job failed').map((log) => log.level)).toEqual(['debug', 'warn']);
    const failed = telemetry.logged('step failed').filter((log) => log.fields?.step === 'each');
    expect(failed).toEqual([
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ children: 3, error: expect.stringContaining('bad item') }),
      }),
    ]);
  });
});
