import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryWorkerTransport } from '../../../functions/adapters/memory/bus.js';
import { type ServeHandle, startServe } from '../../../functions/local/serve.js';
import { createJsonLogger } from '../../../functions/telemetry/json-logger.js';
import { createWorker, suspend, type Worker, WorkerError } from '../../../functions/worker/index.js';
import { describeRun, runCli } from '../../support/cli-process.js';

const BIN = join(import.meta.dirname, '../../../bin/switchyard.js');
const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as {
    version: string;
  }
).version;
// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what is looked for
const COLOUR = /\u001b\[\d+m/;

const WORKFLOWS = `workflows:
  - name: fine
    description: echoes its input
    steps:
      - { name: echo, timeout: 30s, retries: 1 }
  - name: broken
    steps:
      - { name: explode }
  - name: unheard
    steps:
      - { name: load }
      - { name: price, queue: cli-pricing, depends: [load] }
      - { name: lines, task: line, depends: [load] }
    tasks:
      - name: line
        itemListKey: lines
        steps:
          - { name: price-line, queue: cli-pricing }
  - name: approval
    searchAttributes: { customer: input.customer }
    steps:
      - { name: review }
      - { name: approve, type: signal, depends: [review] }
`;

const quote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

/**
 * `switchyard <args>` in a pseudo-terminal (util-linux `script`): stdout and stderr are a TTY. A
 * long-running command (`watch`) is acted on once it has drawn what the test waits for (`drawn`),
 * not after a time a loaded machine may not keep to; `done` is its end, killed after 30 s.
 */
function watchInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { drawn(pattern: RegExp): Promise<void>; done: Promise<{ code: number; output: string }> } {
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm', NO_COLOR: '', FORCE_COLOR: '', ...env },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let output = '';
  const listeners = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    for (const listener of listeners) listener();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const done = new Promise<{ code: number; output: string }>((resolve) => {
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code: code ?? -1, output });
    });
  });
  const drawn = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!pattern.test(output)) return;
        listeners.delete(check);
        resolve();
      };
      listeners.add(check);
      check();
      void done.then(() => {
        listeners.delete(check);
        reject(new Error(`watch ended before it drew ${pattern}:\n${output}`));
      });
    });
  return { drawn, done };
}

/** A command in a pseudo-terminal, run to its end. */
const inTerminal = (args: string[], env: NodeJS.ProcessEnv = {}) => watchInTerminal(args, env).done;

describe('The command line, as people and scripts use it', { timeout: 60_000 }, () => {
  let dir: string;
  let serve: ServeHandle;
  let workers: Worker[];
  let url: string;
  const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runCli([...args, '--url', url], 30_000, { NO_COLOR: '', FORCE_COLOR: '', ...env });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    await writeFile(join(dir, 'workflows.yaml'), WORKFLOWS);
    serve = await startServe({
      configFiles: [join(dir, 'workflows.yaml')],
      db: ':memory:',
      bus: 'memory',
      port: 0,
      logger: createJsonLogger({ level: 'error' }),
    });
    url = serve.url;
    const broker = serve.broker;
    if (!broker) throw new Error('no in-memory broker');
    const transport = () => new MemoryWorkerTransport(broker);
    const quiet = { info() {}, warn() {}, error() {} };
    workers = [
      createWorker({ queue: 'echo', transport: transport(), logger: quiet, handler: (input) => input }),
      createWorker({
        queue: 'explode',
        transport: transport(),
        logger: quiet,
        handler: () => {
          throw new WorkerError('the fuse was lit', { retryable: false });
        },
      }),
      createWorker({
        queue: 'load',
        transport: transport(),
        logger: quiet,
        handler: () => ({ lines: [1, 2, 3] }),
      }),
      createWorker({
        queue: 'review',
        transport: transport(),
        logger: quiet,
        handler: (input) => (input.signal ? { reviewed: true } : suspend('waiting for finance')),
      }),
    ];
    await Promise.all(workers.map((worker) => worker.start()));
  });

  afterAll(async () => {
    await Promise.all((workers ?? []).map((worker) => worker.stop()));
    await serve?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('--version prints the package version; submit --version still names the workflow version', async () => {
    const version = await runCli(['--version']);
    expect(version.stdout.trim()).toBe(VERSION);
    const submitted = await cli(['submit', 'fine', '--version', '1', '--input', '{"a":1}', '--wait']);
    expect(submitted.code, describeRun(submitted)).toBe(0);
    expect(JSON.parse(submitted.stdout)).toEqual({ a: 1 });
  });

  it('submit without a terminal: the id alone on stdout, the id and the dashboard link on stderr', async () => {
    const submitted = await cli(['submit', 'fine']);
    expect(submitted.code, describeRun(submitted)).toBe(0);
    const id = submitted.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(submitted.stderr).toBe(`started job ${id}  ${url}/#/job/${id}\n`);
  });

  it('submit on a terminal: the id and link at once, then the live view until the end, in colour', async () => {
    const { code, output } = await inTerminal(['submit', 'fine', '--input', '{"b":2}', '--url', url]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/started.*job.*[0-9a-f-]{36}.*#\/job\//);
    expect(output).toMatch(/1\/1 steps done/);
    expect(output).toContain('"b": 2');
    expect(output).toMatch(COLOUR);
  });

  it('exits 1 for a failed job: submit --wait, status and watch alike; 0 for a completed one', async () => {
    const failed = await cli(['submit', 'broken', '--wait']);
    expect(failed.code, describeRun(failed)).toBe(1);
    expect(failed.stdout).toMatch(/failed: step explode: the fuse was lit/);
    const id = /started job ([0-9a-f-]{36})/.exec(failed.stderr)?.[1] as string;

    const status = await cli(['status', id]);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/✗ explode\s+failed/);
    expect(status.stdout).not.toMatch(COLOUR);
    expect((await cli(['status', id, '--json'])).code).toBe(1);
    expect((await cli(['watch', id])).code).toBe(1);

    const fine = (await cli(['submit', 'fine'])).stdout.trim();
    await expect.poll(async () => (await cli(['status', fine])).stdout).toMatch(/completed/);
    const done = await cli(['status', fine]);
    expect(done.code).toBe(0);
    // A worker step's time is from the request sent to the reply: its queue wait is part of it.
    expect(done.stdout).toMatch(
      /✓ echo\s+completed\s+\d+(ms|\.\ds) from sent to reply \(queue wait included\)/,
    );
  });

  it('colour on a terminal only, and never with NO_COLOR', async () => {
    const id = (await cli(['submit', 'fine'])).stdout.trim();
    const coloured = await inTerminal(['status', id, '--url', url]);
    expect(coloured.output).toMatch(COLOUR);
    const plain = await inTerminal(['status', id, '--url', url], { NO_COLOR: '1' });
    expect(plain.output).toContain(id);
    expect(plain.output).not.toMatch(COLOUR);
    expect((await cli(['status', id])).stdout).not.toMatch(COLOUR);
  });

  it('jobs: a header, a duration and an error column; -o json', async () => {
    const table = await cli(['jobs', '--status', 'all']);
    expect(table.code, describeRun(table)).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+STATUS\s+WORKFLOW\s+PROGRESS\s+CREATED\s+TIME\s+ERROR$/);
    expect(rows.find((row) => row.includes('broken v1'))).toMatch(
      /failed\s+broken v1\s+0\/1 steps\s+\S+ \S+\s+\d+(ms|\.\ds)\s+explode: the fuse was lit/,
    );
    const json = JSON.parse((await cli(['jobs', '--status', 'all', '-o', 'json'])).stdout) as {
      workflow: string;
      error?: { message: string };
    }[];
    expect(json.find((job) => job.workflow === 'broken')?.error?.message).toBe('the fuse was lit');
    expect((await cli(['jobs', '-o', 'yaml'])).code).not.toBe(0);
  });

  it('history: what happened, each attempt with its worker and each command with its actor; -o json', async () => {
    const failed = await cli(['submit', 'broken', '--wait']);
    const id = /started job ([0-9a-f-]{36})/.exec(failed.stderr)?.[1] as string;
    const table = await cli(['history', id]);
    expect(table.code, describeRun(table)).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^TIME\s+WHAT\s+STEP\s+WHO\s+DETAIL$/);
    expect(rows[0]).toMatch(/job\.created\s+root$/);
    const worker = `${hostname()}:${process.pid}`;
    expect(rows.find((row) => row.includes('step.failed'))).toMatch(
      new RegExp(`step\\.failed\\s+explode #1\\s+worker ${worker}\\s+the fuse was lit`),
    );
    expect(rows.at(-1)).toMatch(/job\.failed/);
    const json = JSON.parse((await cli(['history', id, '-o', 'json'])).stdout) as {
      events: { kind: string; worker?: string }[];
      dropped: number;
    };
    expect(json.dropped).toBe(0);
    expect(json.events.find((entry) => entry.kind === 'step.attempt_failed')?.worker).toBe(worker);
  });

  it('workflows: name, latest version, enabled, and job counts; -o json', async () => {
    const table = await cli(['workflows']);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+ENABLED\s+RUNNING\s+COMPLETED\s+FAILED\s+DESCRIPTION$/);
    expect(lines.find((line) => line.startsWith('broken'))).toMatch(/^broken\s+v1\s+yes\s+0\s+0\s+[1-9]\d*$/);
    expect(lines.find((line) => line.startsWith('fine'))).toMatch(
      /^fine\s+v1\s+yes\s+\d+\s+[1-9]\d*\s+0\s+echoes its input$/,
    );
    const json = JSON.parse((await cli(['workflows', '-o', 'json'])).stdout) as { name: string }[];
    expect(json.map((workflow) => workflow.name).sort()).toEqual(['approval', 'broken', 'fine', 'unheard']);
  });

  it("describe: the definition's steps with their keys, its tasks and versions; -o json", async () => {
    const described = await cli(['describe', 'unheard']);
    expect(described.code, describeRun(described)).toBe(0);
    expect(described.stdout).toMatch(/^unheard {2}v1 \(latest\) {2}enabled/);
    expect(described.stdout).toMatch(/price\s+queue cli-pricing, after load/);
    expect(described.stdout).toMatch(/lines\s+fan-out over task line, after load/);
    expect(described.stdout).toMatch(/task line {2}one child per element of "lines"/);
    expect(described.stdout).toMatch(/price-line\s+queue cli-pricing/);
    expect(described.stdout).toMatch(/versions\n {2}v1 {2}\d{4}-/);
    expect((await cli(['describe', 'fine'])).stdout).toMatch(/echo\s+queue echo, timeout 30s, 1 retry/);
    const json = JSON.parse((await cli(['describe', 'fine', '-o', 'json'])).stdout) as {
      definition: { steps: unknown[] };
    };
    expect(json.definition.steps).toEqual([{ name: 'echo', timeout: '30s', retries: 1 }]);
    expect((await cli(['describe', 'nope'])).stderr).toMatch(/404 no workflow named "nope"/);
  });

  it('says which queue holds a step up: status and watch, and queues lists it', async () => {
    const id = (await cli(['submit', 'unheard'])).stdout.trim();
    // A running step's queue is looked at after a few seconds (QUEUE_CHECK_AFTER_MS).
    const warning = 'queue cli-pricing: 4 ready, 0 consumers — is a worker listening on "cli-pricing"?';
    await expect
      .poll(async () => (await cli(['status', id])).stdout, { timeout: 20_000, interval: 500 })
      .toContain(warning);
    const status = await cli(['status', id]);

    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/● price\s+running\s+in queue or running for \d+\.\ds/);
    expect(status.stdout).toMatch(/● lines\s+running\s+0\/3 children/);

    const queues = await cli(['queues']);
    const [header, ...rows] = queues.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^QUEUE\s+READY\s+CONSUMERS\s+STEPS$/);
    expect(rows.find((row) => row.startsWith('cli-pricing'))).toMatch(
      /^cli-pricing\s+4\s+0\s+unheard\/price, unheard\/line\/price-line\s+no consumer: is a worker listening\?$/,
    );
    expect(rows.find((row) => row.startsWith('echo '))).toMatch(/^echo\s+0\s+1\s+fine\/echo$/);
    const json = JSON.parse((await cli(['queues', '--workflow', 'unheard', '-o', 'json'])).stdout);
    expect(json).toEqual([
      {
        queue: 'load',
        vhost: null,
        exists: true,
        ready: 0,
        consumers: 1,
        steps: [{ workflow: 'unheard', step: 'load' }],
      },
      {
        queue: 'cli-pricing',
        vhost: null,
        exists: true,
        ready: 4,
        consumers: 0,
        steps: [
          { workflow: 'unheard', step: 'price' },
          { workflow: 'unheard', task: 'line', step: 'price-line' },
        ],
      },
    ]);

    // watch, on a terminal: the steps running and the warning, until the job is cancelled
    const watching = watchInTerminal(['watch', id, '--url', url]);
    await watching.drawn(/queue cli-pricing: 4 ready, 0 consumers/);
    await cli(['cancel', id]);
    const { code, output } = await watching.done;
    expect(code).toBe(1);
    expect(output).toMatch(/running: .*price \(in queue or running for/);
    expect(output).toMatch(/lines \(0\/3 children\)/);
    expect(output).toContain('queue cli-pricing: 4 ready, 0 consumers');
  });
  it('status, jobs and watch show a suspended step and a signal step as waiting, with the command that lets each go on', async () => {
    // Prepare: the review step's worker suspends it.
    const id = (await cli(['submit', 'approval'])).stdout.trim();
    await expect
      .poll(async () => (await cli(['status', id])).stdout, { timeout: 15_000 })
      .toMatch(/◌ review\s+suspended/);

    // Act and assess: status says why it waits, how long the worker took, and what to run.
    const status = (await cli(['status', id])).stdout;
    expect(status).toMatch(
      /◌ review\s+suspended\s+for [\d.]+m?s: waiting for finance, worker answered suspend after \d+(ms|\.\ds)/,
    );
    expect(status).not.toMatch(/from sent to reply/);
    const command = `switchyard signal ${id} review --input '{}'`;
    expect(status).toContain(`review (suspended `);
    expect(status).toContain(`→  ${command}`);

    // jobs: listed as waiting, a column for what the job waits for, and where to find the command.
    const jobs = (await cli(['jobs', '--status', 'waiting'])).stdout.trimEnd().split('\n');
    expect(jobs[0]).toMatch(/^ID\s+STATUS\s+WORKFLOW\s+PROGRESS\s+CREATED\s+TIME\s+WAITING FOR\s+ERROR$/);
    expect(jobs.find((row) => row.startsWith(id))).toMatch(
      /waiting\s+approval v1\s+0\/2 steps\s+\S+ \S+\s+running [\d.]+m?s\s+suspended review: waiting for finance$/,
    );
    expect(jobs.at(-1)).toMatch(/wait(s)? for someone: "switchyard status ID" prints the command/);

    // The command printed works: the step is sent again, completes, and the signal step waits next.
    const signalled = await cli(['signal', id, 'review', '--input', '{}']);
    expect(signalled.code, describeRun(signalled)).toBe(0);
    await expect
      .poll(async () => (await cli(['status', id])).stdout, { timeout: 15_000 })
      .toMatch(/◌ approve\s+waiting for signal\s+for /);
    expect((await cli(['status', id])).stdout).toContain(`→  switchyard signal ${id} approve --input '{}'`);

    // watch: the signal step is not "running", it waits, and says what to run; then the job ends.
    const watching = watchInTerminal(['watch', id, '--url', url]);
    await watching.drawn(/waiting: approve \(waiting for its signal/);
    await cli(['signal', id, 'approve', '--input', '{"approved": true}']);
    const { code, output } = await watching.done;
    expect(code, output).toBe(0);
    expect(output).toMatch(/a step waits for someone/);
    expect(output).toContain(`waiting: approve (waiting for its signal`);
    expect(output).toContain(`switchyard signal ${id} approve --input '{}'`);
    expect(output).not.toMatch(/running: approve/);
  });

  it('finds the jobs waiting for approval of customer c-42 with one command, and cancels them by the same search', async () => {
    // Prepare: three jobs of c-42 and one of c-7, each suspended by its review worker.
    const submit = async (customer: string) =>
      (await cli(['submit', 'approval', '--input', JSON.stringify({ customer })])).stdout.trim();
    const mine = [await submit('c-42'), await submit('c-42'), await submit('c-42')];
    const other = await submit('c-7');
    const search = ['--status', 'waiting', '--attr', 'customer=c-42'];
    await expect
      .poll(async () => (await cli(['jobs', ...search, '--all', '-o', 'json'])).stdout, { timeout: 15_000 })
      .toSatisfy((text: string) => mine.every((id) => text.includes(id)));

    // Act and assess: one command finds them, every page of one each.
    const found = await cli(['jobs', ...search, '--limit', '1', '--all', '-o', 'json']);
    expect(found.code, describeRun(found)).toBe(0);
    const ids = (JSON.parse(found.stdout) as { uuid: string; status: string }[]).map((job) => job.uuid);
    expect(ids).toEqual([...mine].reverse());
    const page = await cli(['jobs', ...search, '--limit', '1']);
    expect(page.stdout).toMatch(/more: --all for every page, or --cursor \S+ for the next/);

    // A dry run counts, and changes nothing; then they are cancelled, and the other job waits on.
    const filter = 'status=waiting attr=customer=c-42';
    const dry = await cli(['cancel', '--filter', filter, '--dry-run']);
    expect(dry.stdout.trim()).toBe('3 jobs match; dry run: nothing cancelled');
    const cancelled = await cli(['cancel', '--filter', filter]);
    expect(cancelled.stdout.trim()).toBe('3 jobs cancelled');
    for (const id of mine) expect((await cli(['status', id])).stdout).toMatch(/cancelled/);
    expect(
      (await cli(['jobs', '--status', 'waiting', '--attr', 'customer=c-7', '-o', 'json'])).stdout,
    ).toContain(other);

    // A wrong filter is refused, naming what is wrong.
    const wrong = await cli(['cancel', '--filter', 'attr=customer']);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/"attr" must be NAME=VALUE pairs/);
    await cli(['cancel', other]);
  });

  it('push says the namespace each workflow was registered in', async () => {
    await writeFile(
      join(dir, 'team-a.yaml'),
      'namespace: team-a\nworkflows:\n  - name: ledger\n    steps:\n      - name: post\n',
    );
    const pushed = await cli(['push', join(dir, 'team-a.yaml')]);
    expect(pushed.code, describeRun(pushed)).toBe(0);
    expect(pushed.stdout.trim()).toBe('ledger: version 1 (new) in namespace team-a');
    const again = await cli(['push', join(dir, 'team-a.yaml')]);
    expect(again.stdout.trim()).toBe('ledger: version 1 (unchanged) in namespace team-a');
  });
});
