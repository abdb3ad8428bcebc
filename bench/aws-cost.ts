import { AWS_CALL_MS } from './aws-call-latency.js';
import { addCounts, type Counts, cloneCounts, diffCounts, emptyCounts } from './aws-meter.js';
import { LAMBDA_MEMORY_GB, PLATFORM_LOG_BYTES_PER_INVOCATION, PRICES } from './aws-prices.js';
import { type Role, type Simulation, startSimulation } from './aws-simulation.js';
import { delay, waitFor } from './child.js';
import { type Invocations, MEMORY_MB_PER_VCPU } from './lambda-invocations.js';
import { DIAMOND, DIAMOND_STEPS, FAN_OUT, fanOutSteps } from './workloads.js';

/*
 * What a step costs on AWS, modelled: the workloads run through the simulated deployment
 * (aws-simulation.ts), every DynamoDB, SQS and Lambda call counted, and the counts priced at the
 * published us-east-1 list prices (aws-prices.ts), next to what Step Functions would bill.
 */

export interface AwsWorkloadCounts {
  workload: 'diamond' | 'fan-out';
  /** Jobs (diamond) or children (fan-out). */
  size: number;
  jobs: number;
  steps: number;
  /** Calls by role; only `api`, `replies`, `eventSource` and `workers` are priced. */
  counts: Partial<Record<Role, Counts>>;
  lambda: { api: Invocations; replies: Invocations };
  /** Bytes the manager's functions logged (application lines and EMF metrics; Lambda's own records not included). */
  logBytes: number;
}

export interface CostBreakdown {
  dynamodb: number;
  lambda: number;
  /** SQS requests of the manager's side: sending requests, the event source taking replies. */
  sqsManager: number;
  /** The REST API's requests (the default): one a job start. */
  apiGateway: number;
  /** The same starts through an HTTP API (`-c api=http`). */
  apiGatewayHttp: number;
  /** The retention run's DynamoDB units: stamping trees with their expiry (TTL's deletes are free). */
  retention: number;
  /** CloudWatch Logs ingestion: what the functions log, and Lambda's start and report records. */
  logs: number;
  /** Orchestration: everything above but the HTTP API (the REST API's stack). */
  orchestration: number;
  /** Orchestration on a stack with `-c api=http`: the HTTP API's requests in place of the REST API's. */
  orchestrationHttpApi: number;
  /** SQS requests of the workers: taking requests, deleting them, sending replies. */
  sqsWorkers: number;
  total: number;
}

export interface AwsCase extends AwsWorkloadCounts {
  /** USD for the whole workload. */
  cost: CostBreakdown;
  perStep: {
    usdPerMillion: CostBreakdown;
    writeUnits: number;
    readUnits: number;
    dynamoCalls: number;
    sqsRequests: number;
    lambdaInvocations: number;
    lambdaBilledMs: number;
    /** Of the invocations' time on the emulators: waiting on AWS's calls, and their own work on one core here (absent in older results). */
    lambdaAwsWaitMs?: number;
    lambdaOwnMs?: number;
    /** Write units of the retention run (expiry stamps). */
    retentionWriteUnits: number;
    /** Bytes ingested by CloudWatch Logs, Lambda's own records included. */
    logBytes: number;
  };
  /** Step Functions' bill for the same work, USD per million steps. */
  stepFunctions: {
    standardTransitions: number;
    standardPerMillionSteps: number;
    expressPerMillionSteps?: number;
  };
}

export interface AwsFigures {
  cases: AwsCase[];
  /** Fan-outs: the cost of one more child, from the difference between the two largest sizes. */
  perChild?: {
    from: number;
    to: number;
    writeUnits: number;
    readUnits: number;
    sqsRequests: number;
    usd: number;
  };
  prices: typeof PRICES;
  lambdaMemoryGb: typeof LAMBDA_MEMORY_GB;
  /** What each AWS call of the manager's functions was taken to last beyond the emulators' answer, ms (absent in older results). */
  awsCallMs?: number;
  /** The memory that Lambda gives one vCPU, MB: the functions' own work is stretched by it (absent in older results). */
  memoryMbPerVcpu?: number;
}

export interface AwsOptions {
  diamondJobs: number;
  /** How long no call may be made before a workload counts as finished. @default 2500 */
  quietMs?: number;
  /** Run each workload a second time, without pricing the writes, to time the invocations. @default true */
  timeInvocations?: boolean;
  fanOutItems: number[];
  log?: (line: string) => void;
}

const PRICED_ROLES: Role[] = ['api', 'replies', 'eventSource', 'workers'];

function snapshot(simulation: Simulation) {
  return {
    counts: Object.fromEntries(
      PRICED_ROLES.map((role) => [role, cloneCounts(simulation.counts[role])]),
    ) as Record<Role, Counts>,
    lambda: {
      api: { ...simulation.invocations.api },
      replies: { ...simulation.invocations.replies },
    },
  };
}

const busy = (simulation: Simulation) =>
  PRICED_ROLES.reduce((sum, role) => {
    const c = simulation.counts[role];
    return sum + Object.values(c.dynamoCalls).reduce((a, b) => a + b, 0) + c.sqsBilledRequests;
  }, 0);

/** Waits for the jobs to end, then for every call they cause (late deletes and acks) to be made. */
async function settle(
  simulation: Simulation,
  workflow: string,
  jobs: number,
  timeoutMs: number,
  quietMs: number,
): Promise<void> {
  await waitFor(
    `${jobs} ${workflow} jobs to complete in the simulation`,
    async () => {
      const counts = await simulation.observer.store.countJobs(workflow);
      if (counts.failed || counts.cancelled) throw new Error(`${workflow}: ${JSON.stringify(counts)}`);
      return counts.completed >= jobs ? true : undefined;
    },
    timeoutMs,
    200,
  );
  let last = busy(simulation);
  let quietSince = Date.now();
  while (Date.now() - quietSince < quietMs) {
    await delay(250);
    const now = busy(simulation);
    if (now !== last) {
      last = now;
      quietSince = Date.now();
    }
  }
}

async function measure(
  simulation: Simulation,
  workload: 'diamond' | 'fan-out',
  size: number,
  quietMs: number,
): Promise<AwsWorkloadCounts> {
  const before = snapshot(simulation);
  const loggedBefore = simulation.logBytes();
  const workflow = workload === 'diamond' ? DIAMOND : FAN_OUT;
  const jobs = workload === 'diamond' ? size : 1;
  const done = (await simulation.observer.store.countJobs(workflow)).completed;
  if (workload === 'diamond') {
    let next = 0;
    const lane = async () => {
      while (next < size) {
        next++;
        await simulation.startJob(DIAMOND, {});
      }
    };
    await Promise.all(Array.from({ length: 10 }, lane));
  } else {
    await simulation.startJob(FAN_OUT, { count: size });
  }
  await settle(simulation, workflow, done + jobs, Math.max(300_000, size * 200), quietMs);
  const after = snapshot(simulation);
  const logBytes = simulation.logBytes() - loggedBefore;
  // The hourly retention run after the jobs ended: what the TTL needs written (its deletes are free).
  const retentionBefore = cloneCounts(simulation.counts.retention);
  await simulation.retentionRun();
  const retention = diffCounts(cloneCounts(simulation.counts.retention), retentionBefore);
  const counts: Partial<Record<Role, Counts>> = {};
  for (const role of PRICED_ROLES) counts[role] = diffCounts(after.counts[role], before.counts[role]);
  counts.retention = retention;
  const lambdaDiff = (key: 'api' | 'replies'): Invocations => {
    const [a, b] = [after.lambda[key], before.lambda[key]];
    return {
      count: a.count - b.count,
      billedMs: a.billedMs - b.billedMs,
      awsWaitMs: (a.awsWaitMs ?? 0) - (b.awsWaitMs ?? 0),
      ownMs: (a.ownMs ?? 0) - (b.ownMs ?? 0),
    };
  };
  return {
    workload,
    size,
    jobs,
    steps: workload === 'diamond' ? size * DIAMOND_STEPS : fanOutSteps(size),
    counts,
    lambda: { api: lambdaDiff('api'), replies: lambdaDiff('replies') },
    logBytes,
  };
}

const zero = (): Counts => emptyCounts();

function price(measured: AwsWorkloadCounts): CostBreakdown {
  const c = (role: Role) => measured.counts[role] ?? zero();
  const manager = addCounts(addCounts(zero(), c('api')), c('replies'));
  const dynamodb =
    manager.writeUnits * PRICES.dynamoWriteRequestUnit.usd +
    manager.readUnits * PRICES.dynamoReadRequestUnit.usd;
  const { api, replies } = measured.lambda;
  const lambda =
    (api.count + replies.count) * PRICES.lambdaRequest.usd +
    ((api.billedMs / 1000) * LAMBDA_MEMORY_GB.api + (replies.billedMs / 1000) * LAMBDA_MEMORY_GB.replies) *
      PRICES.lambdaArmGbSecond.usd;
  const sqsManager = (manager.sqsBilledRequests + c('eventSource').sqsBilledRequests) * PRICES.sqsRequest.usd;
  const apiGateway = measured.jobs * PRICES.apiGatewayRestRequest.usd;
  // A job start's body is far under 512 KB: one metered request each.
  const apiGatewayHttp = measured.jobs * PRICES.apiGatewayHttpRequest.usd;
  const retention =
    c('retention').writeUnits * PRICES.dynamoWriteRequestUnit.usd +
    c('retention').readUnits * PRICES.dynamoReadRequestUnit.usd;
  const logs = (loggedBytes(measured) / 1e9) * PRICES.cloudWatchLogsIngestionGb.usd;
  const orchestration = dynamodb + lambda + sqsManager + apiGateway + retention + logs;
  const orchestrationHttpApi = orchestration - apiGateway + apiGatewayHttp;
  const sqsWorkers = c('workers').sqsBilledRequests * PRICES.sqsRequest.usd;
  return {
    dynamodb,
    lambda,
    sqsManager,
    apiGateway,
    apiGatewayHttp,
    retention,
    logs,
    orchestration,
    orchestrationHttpApi,
    sqsWorkers,
    total: orchestration + sqsWorkers,
  };
}

/** What CloudWatch Logs ingests for a workload: the functions' lines, and Lambda's two records an invocation. */
const loggedBytes = (measured: AwsWorkloadCounts): number =>
  measured.logBytes +
  (measured.lambda.api.count + measured.lambda.replies.count) * PLATFORM_LOG_BYTES_PER_INVOCATION;

const scale = (cost: CostBreakdown, by: number): CostBreakdown =>
  Object.fromEntries(Object.entries(cost).map(([k, v]) => [k, v * by])) as unknown as CostBreakdown;

/**
 * Step Functions for the same work. Standard bills every state entered: the diamond as
 * s1 -> Parallel(s2, s3) -> s4 enters 5 states; the fan-out as list -> Map(work) -> sum enters
 * N + 3 (each iteration's state counts). Express bills an execution ($1 per million) and its
 * duration in 64 MB chunks rounded up to 100 ms: at least 64 MB x 100 ms an execution, with
 * no-op workers; it cannot run the 100,000-item fan-out inline (5-minute and 256 KB payload
 * limits; Distributed Map needs a Standard parent), so only the diamond is priced for Express.
 */
function stepFunctions(measured: AwsWorkloadCounts): AwsCase['stepFunctions'] {
  const transitions = measured.workload === 'diamond' ? 5 * measured.jobs : measured.size + 3;
  const standard = transitions * PRICES.stepFunctionsStandardTransition.usd;
  const expressPerExecution =
    PRICES.stepFunctionsExpressRequest.usd + (64 / 1024) * 0.1 * PRICES.stepFunctionsExpressGbSecond.usd;
  return {
    standardTransitions: transitions,
    standardPerMillionSteps: (standard / measured.steps) * 1e6,
    expressPerMillionSteps:
      measured.workload === 'diamond'
        ? ((expressPerExecution * measured.jobs) / measured.steps) * 1e6
        : undefined,
  };
}

function sumCalls(record: Record<string, number>): number {
  return Object.values(record).reduce((a, b) => a + b, 0);
}

function describe(measured: AwsWorkloadCounts): AwsCase {
  const cost = price(measured);
  const manager = addCounts(
    addCounts(zero(), measured.counts.api ?? zero()),
    measured.counts.replies ?? zero(),
  );
  const allSqs = PRICED_ROLES.reduce((sum, role) => sum + (measured.counts[role]?.sqsBilledRequests ?? 0), 0);
  const perStep = 1 / measured.steps;
  return {
    ...measured,
    cost,
    perStep: {
      usdPerMillion: scale(cost, perStep * 1e6),
      writeUnits: manager.writeUnits * perStep,
      readUnits: manager.readUnits * perStep,
      dynamoCalls: sumCalls(manager.dynamoCalls) * perStep,
      sqsRequests: allSqs * perStep,
      lambdaInvocations: (measured.lambda.api.count + measured.lambda.replies.count) * perStep,
      lambdaBilledMs: (measured.lambda.api.billedMs + measured.lambda.replies.billedMs) * perStep,
      lambdaAwsWaitMs:
        ((measured.lambda.api.awsWaitMs ?? 0) + (measured.lambda.replies.awsWaitMs ?? 0)) * perStep,
      lambdaOwnMs: ((measured.lambda.api.ownMs ?? 0) + (measured.lambda.replies.ownMs ?? 0)) * perStep,
      retentionWriteUnits: (measured.counts.retention?.writeUnits ?? 0) * perStep,
      logBytes: loggedBytes(measured) * perStep,
    },
    stepFunctions: stepFunctions(measured),
  };
}

export async function benchAwsCost(options: AwsOptions): Promise<AwsFigures> {
  const log = options.log ?? (() => {});
  const simulation = await startSimulation();
  const cases: AwsCase[] = [];
  try {
    // Warm up: the first job pays for queue URL look-ups and cold caches that a deployment amortises.
    const quietMs = options.quietMs ?? 2_500;
    // Each workload twice: pricing the writes (probing item sizes), then timing the invocations, one
    // at a time and each AWS call taking AWS's time (Simulation.setTiming).
    const twice = async (workload: 'diamond' | 'fan-out', size: number): Promise<AwsWorkloadCounts> => {
      simulation.setProbing(true);
      const priced = await measure(simulation, workload, size, quietMs);
      simulation.setProbing(false);
      if (options.timeInvocations === false) return priced;
      simulation.setTiming(true);
      try {
        const timed = await measure(simulation, workload, size, quietMs);
        return { ...priced, lambda: timed.lambda };
      } finally {
        simulation.setTiming(false);
      }
    };
    simulation.setProbing(false);
    await measure(simulation, 'diamond', 2, quietMs);
    await measure(simulation, 'fan-out', 10, quietMs);
    const diamond = describe(await twice('diamond', options.diamondJobs));
    cases.push(diamond);
    log(`aws diamond x${options.diamondJobs}: ${summary(diamond)}`);
    for (const items of options.fanOutItems) {
      const fan = describe(await twice('fan-out', items));
      cases.push(fan);
      log(`aws fan-out ${items}: ${summary(fan)}`);
    }
  } finally {
    await simulation.stop();
  }
  const fans = cases.filter((c) => c.workload === 'fan-out').sort((a, b) => a.size - b.size);
  const small = fans.at(-2);
  const large = fans.at(-1);
  let perChild: AwsFigures['perChild'];
  if (small && large && large.size > small.size) {
    const extra = large.size - small.size;
    const units = (c: AwsCase, key: 'writeUnits' | 'readUnits') => c.perStep[key] * c.steps;
    perChild = {
      from: small.size,
      to: large.size,
      writeUnits: (units(large, 'writeUnits') - units(small, 'writeUnits')) / extra,
      readUnits: (units(large, 'readUnits') - units(small, 'readUnits')) / extra,
      sqsRequests:
        (large.perStep.sqsRequests * large.steps - small.perStep.sqsRequests * small.steps) / extra,
      usd: (large.cost.total - small.cost.total) / extra,
    };
  }
  return {
    cases,
    perChild,
    prices: PRICES,
    lambdaMemoryGb: LAMBDA_MEMORY_GB,
    awsCallMs: AWS_CALL_MS,
    memoryMbPerVcpu: MEMORY_MB_PER_VCPU,
  };
}

function summary(c: AwsCase): string {
  const p = c.perStep;
  return (
    `${p.writeUnits.toFixed(2)} WRU, ${p.readUnits.toFixed(2)} RRU, ${p.dynamoCalls.toFixed(2)} DynamoDB calls, ` +
    `${p.sqsRequests.toFixed(2)} SQS requests, ${p.lambdaInvocations.toFixed(2)} invocations ` +
    `(${p.lambdaBilledMs.toFixed(1)} ms), ${p.retentionWriteUnits.toFixed(2)} retention WRU ` +
    `($${p.usdPerMillion.retention.toFixed(2)}/M), ${p.logBytes.toFixed(0)} log bytes ($${p.usdPerMillion.logs.toFixed(2)}/M) a step; ` +
    `retention WRU by kind ${JSON.stringify(c.counts.retention?.writeUnitsByKind ?? {})}; ` +
    `$${p.usdPerMillion.dynamodb.toFixed(2)} DynamoDB, $${p.usdPerMillion.lambda.toFixed(2)} Lambda, ` +
    `$${p.usdPerMillion.sqsManager.toFixed(2)} SQS, $${p.usdPerMillion.apiGateway.toFixed(2)} API Gateway; ` +
    `$${p.usdPerMillion.orchestration.toFixed(2)} orchestration ` +
    `($${p.usdPerMillion.orchestrationHttpApi.toFixed(2)} with an HTTP API) + ` +
    `$${p.usdPerMillion.sqsWorkers.toFixed(2)} worker messaging per million steps ` +
    `(Step Functions Standard $${c.stepFunctions.standardPerMillionSteps.toFixed(2)})`
  );
}
