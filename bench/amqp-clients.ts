import { setTimeout } from 'node:timers/promises';
import { type FloorClient, runFloorOnce } from './broker-floor.js';
import { describeMachine } from './machine.js';
import { formatSpread, spread } from './stats.js';

/*
 * The broker's floor on two AMQP clients, alternating (issue 34: "compare amqplib with the
 * maintained alternatives, e.g. rabbitmq-client, on the floor benchmark"): the same diamonds,
 * workers, messages and batching, once through serve's own amqplib code (bench/floor-manager.ts)
 * and once through `rabbitmq-client` (bench/floor-manager-rabbitmq-client.ts). Prints, for each,
 * steps/s and the manager's CPU a step; RabbitMQ's CPU a step says whether either client makes the
 * broker work more.
 *
 *   npm run bench:amqp-clients
 *
 * The run right after another runs slower (the broker still deletes the last run's queues and
 * frees its memory): the pairs alternate which client goes first, and an even number of pairs
 * gives each client the first place as often, with a pause between runs.
 *
 * Environment: BENCH_PAIRS (default 6), BENCH_JOBS (measured diamonds, default 10000),
 * BENCH_WARM_JOBS (default 3000), BENCH_PAUSE_MS (between runs, default 3000).
 */

const env = process.env;
const pairs = Number(env.BENCH_PAIRS ?? 6);
const pauseMs = Number(env.BENCH_PAUSE_MS ?? 3_000);
const jobs = Number(env.BENCH_JOBS ?? 10_000);
const warmJobs = Number(env.BENCH_WARM_JOBS ?? 3_000);
const clients: FloorClient[] = ['amqplib', 'rabbitmq-client'];

interface Figures {
  stepsPerSecond: number[];
  managerUs: number[];
  rabbitmqUs: number[];
}
const figures = new Map<FloorClient, Figures>(
  clients.map((client) => [client, { stepsPerSecond: [], managerUs: [], rabbitmqUs: [] }]),
);

const about = describeMachine();
process.stdout.write(
  `${new Date().toISOString()} ${about.cpu}, ${about.cores} cores, Node ${about.node}, RabbitMQ ${about.rabbitmq}; ` +
    `${pairs} pairs of ${jobs} diamonds after ${warmJobs}\n`,
);
for (let pair = 1; pair <= pairs; pair++) {
  // Each pair starts with the other client, so that neither always runs on a broker just warmed by the other.
  const order = pair % 2 ? clients : [...clients].reverse();
  for (const client of order) {
    await setTimeout(pauseMs);
    const run = await runFloorOnce(jobs, warmJobs, client);
    const perStep = (seconds: number | undefined) => ((seconds ?? Number.NaN) * 1e6) / run.steps;
    const into = figures.get(client) as Figures;
    into.stepsPerSecond.push(run.stepsPerSecond);
    into.managerUs.push(perStep(run.cpuSeconds.manager));
    into.rabbitmqUs.push(perStep(run.cpuSeconds.rabbitmq));
    process.stdout.write(
      `pair ${pair} ${client}: ${Math.round(run.stepsPerSecond)} steps/s, the manager ${perStep(run.cpuSeconds.manager).toFixed(1)} µs ` +
        `of CPU a step, RabbitMQ ${perStep(run.cpuSeconds.rabbitmq).toFixed(1)} µs, load ${run.loadAverage.before}\n`,
    );
  }
}
for (const [client, { stepsPerSecond, managerUs, rabbitmqUs }] of figures) {
  process.stdout.write(
    `${client}: ${formatSpread(spread(stepsPerSecond))} steps/s; the manager ${formatSpread(spread(managerUs), 1)} µs ` +
      `of CPU a step; RabbitMQ ${formatSpread(spread(rabbitmqUs), 1)} µs\n`,
  );
}
process.exit(0);
