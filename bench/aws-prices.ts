import { FUNCTION_SIZES } from '../infra/function-sizes.js';
/*
 * Published AWS list prices, us-east-1, as looked up on 2026-11-22 (the AWS pricing pages render
 * their tables with JavaScript, so where the page text has no figure the figure is quoted from
 * the secondary source named next to it, which quotes that page). Free tiers are left out: the
 * model is of a steady workload past them.
 */

export interface Price {
  usd: number;
  per: string;
  sources: string[];
}

export const PRICES = {
  dynamoWriteRequestUnit: {
    usd: 0.625 / 1e6,
    per: 'write request unit (on-demand, Standard table class)',
    sources: [
      'https://aws.amazon.com/dynamodb/pricing/on-demand/',
      'https://docs.aws.amazon.com/whitepapers/latest/how-aws-pricing-works/dynamodb.html (units: 1 KB a write, 2 for a transactional write)',
      'https://airbyte.com/data-engineering-resources/dynamodb-pricing (2025-07-21: $0.625 per million WRU after the 50% cut of 2024-11-01)',
    ],
  },
  dynamoReadRequestUnit: {
    usd: 0.125 / 1e6,
    per: 'read request unit (on-demand; 4 KB strongly consistent, half for eventually consistent)',
    sources: [
      'https://aws.amazon.com/dynamodb/pricing/on-demand/',
      'https://airbyte.com/data-engineering-resources/dynamodb-pricing (2025-07-21: $0.125 per million RRU)',
    ],
  },
  sqsRequest: {
    usd: 0.4 / 1e6,
    per: 'SQS standard-queue request (each 64 KB chunk of a payload is one request)',
    sources: [
      'https://aws.amazon.com/sqs/pricing/',
      'https://cloudburn.io/blog/amazon-sqs-pricing (2026-03-14: $0.40 per million, first 100 billion a month; 64 KB chunks)',
    ],
  },
  lambdaRequest: {
    usd: 0.2 / 1e6,
    per: 'Lambda invocation',
    sources: ['https://aws.amazon.com/lambda/pricing/'],
  },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    per: 'Lambda GB-second on arm64 (first 7.5 billion GB-s a month; billed per 1 ms)',
    sources: [
      'https://aws.amazon.com/lambda/pricing/',
      'https://cloudchipr.com/blog/aws-lambda-pricing (Arm: $0.0000133334 per GB-s, first 7.5 billion GB-s)',
    ],
  },
  apiGatewayRestRequest: {
    usd: 3.5 / 1e6,
    per: 'API Gateway REST API request (first 333 million a month)',
    sources: [
      'https://aws.amazon.com/api-gateway/pricing/',
      'https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html (Table 4: REST $3.50 per million, first 333 million)',
    ],
  },
  apiGatewayHttpRequest: {
    usd: 1 / 1e6,
    per: 'API Gateway HTTP API request, each 512 KB of it (first 300 million a month; `-c api=http`)',
    sources: [
      'https://aws.amazon.com/api-gateway/pricing/',
      'https://docs.aws.amazon.com/whitepapers/latest/best-practices-api-gateway-private-apis-integration/cost-optimization.html (Table 4: HTTP $1.00 per million, first 300 million)',
    ],
  },
  stepFunctionsStandardTransition: {
    usd: 25 / 1e6,
    per: 'Step Functions Standard state transition',
    sources: [
      'https://aws.amazon.com/step-functions/pricing/ ("a state transition each time a step of your workflow is executed", retries included)',
      'https://www.wring.co/blog/aws-step-functions-pricing-guide (2026-03-14: $25.00 per million transitions)',
    ],
  },
  stepFunctionsExpressRequest: {
    usd: 1 / 1e6,
    per: 'Step Functions Express execution (request)',
    sources: [
      'https://aws.amazon.com/step-functions/pricing/',
      'https://www.wring.co/blog/aws-step-functions-pricing-guide (2026-03-14: $1.00 per million requests)',
    ],
  },
  stepFunctionsExpressGbSecond: {
    usd: 0.00001667,
    per: 'Step Functions Express GB-second (first 1,000 GB-hours; duration rounded up to 100 ms, memory in 64 MB chunks)',
    sources: [
      'https://aws.amazon.com/step-functions/pricing/ (100 ms rounding, 64 MB chunks)',
      'https://www.wring.co/blog/aws-step-functions-pricing-guide (2026-03-14: $0.00001667 per GB-second, 64 MB minimum)',
    ],
  },
  cloudWatchLogsIngestionGb: {
    usd: 0.5,
    per: 'CloudWatch Logs ingestion, Standard log class, per GB (what the functions write to stdout, EMF metrics included)',
    sources: [
      'https://aws.amazon.com/cloudwatch/pricing/',
      'https://c3x.dev/blog/cloudwatch-logs-cost-optimization (us-east-1, June 2026: Standard ingestion $0.50 per GB)',
    ],
  },
} as const satisfies Record<string, Price>;

/**
 * What Lambda itself writes to a function's log group per invocation with the JSON log format (the
 * stack's): a `platform.start` and a `platform.report` record
 * (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-logformat.html), here at
 * the size of records of that shape.
 */
export const PLATFORM_LOG_BYTES_PER_INVOCATION =
  JSON.stringify({
    time: '2026-11-28T02:50:00.000Z',
    type: 'platform.start',
    record: { requestId: '6d68ca91-49c9-448d-89b8-7ca3e6dc66aa', version: '42' },
  }).length +
  JSON.stringify({
    time: '2026-11-28T02:50:00.031Z',
    type: 'platform.report',
    record: {
      requestId: '6d68ca91-49c9-448d-89b8-7ca3e6dc66aa',
      metrics: { durationMs: 31.42, billedDurationMs: 32, memorySizeMB: 1024, maxMemoryUsedMB: 143 },
      status: 'success',
    },
  }).length +
  2;

/** Memory of the stack's functions (infra/function-sizes.ts), GB. */
export const LAMBDA_MEMORY_GB = {
  api: FUNCTION_SIZES.api.memorySize / 1024,
  replies: FUNCTION_SIZES.replies.memorySize / 1024,
  timers: FUNCTION_SIZES.timers.memorySize / 1024,
};
