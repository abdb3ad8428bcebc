import { S3Client } from '@aws-sdk/client-s3';
import type { Context, DynamoDBStreamEvent } from 'aws-lambda';
import { expiredJobs } from '../adapters/dynamodb/expired-jobs.js';
import { putArchiveObject } from '../adapters/s3/archive-bucket.js';
import { createLambdaTelemetry } from '../aws/lambda-telemetry.js';
import { sdkClientConfig } from '../aws/sdk-clients.js';
import type { ArchiveLine } from '../local/job-archive.js';
import type { Logger } from '../telemetry/telemetry.js';

export type ArchiveHandler = (
  event: DynamoDBStreamEvent,
  context: Pick<Context, 'awsRequestId'>,
) => Promise<void>;

/**
 * The table's stream, filtered to what DynamoDB's TTL deleted of job heads and chunks
 * (infra/constructs/job-archive.ts), written to the archive bucket as one JSON Lines object per
 * batch: the jobs as they were when they expired, each a line as serve's archive files hold
 * (`switchyard archive --s3` reads them). A failed write throws: the event source retries the batch
 * (split in halves), a bounded number of times, then records it in its on-failure queue.
 */
export function createArchiveHandler(deps: {
  s3: S3Client;
  bucket: string;
  logger: Logger;
  clock?: () => number;
}): ArchiveHandler {
  return async (event, context) => {
    const { jobs, partial } = await expiredJobs(event.Records);
    if (!jobs.length && !partial.length) return;
    const now = (deps.clock ?? Date.now)();
    const archivedAt = new Date(now).toISOString();
    const lines: ArchiveLine[] = [
      ...jobs.map((job) => ({ archivedAt, job })),
      ...partial.map((job) => ({ archivedAt, job, partial: true as const })),
    ];
    const key = await putArchiveObject(deps.s3, deps.bucket, lines, now, context.awsRequestId);
    deps.logger.info('archived expired jobs', { key, jobs: jobs.length, partial: partial.length });
  };
}

let built: ArchiveHandler | undefined;

export const handler: ArchiveHandler = (event, context) => {
  const bucket = process.env.ARCHIVE_BUCKET;
  if (!bucket) throw new Error('ARCHIVE_BUCKET is not set: the archive function needs its bucket');
  built ??= createArchiveHandler({
    s3: new S3Client(sdkClientConfig()),
    bucket,
    logger: createLambdaTelemetry({ logLevel: 'info' }).logger,
  });
  return built(event, context);
};
