import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { ArchiveLine, ArchiveSource } from '../../local/job-archive.js';

/**
 * The deployed archive: JSON Lines objects in the stack's bucket, `jobs/YYYY-MM-DD/<ms>-<name>.jsonl`
 * (the day and time they were written), each line an `ArchiveLine` as serve's archive files hold.
 */

export const ARCHIVE_PREFIX = 'jobs/';

/** Writes one object of lines; returns its key. */
export async function putArchiveObject(
  s3: S3Client,
  bucket: string,
  lines: readonly ArchiveLine[],
  now: number,
  name: string,
): Promise<string> {
  const day = new Date(now).toISOString().slice(0, 10);
  const key = `${ARCHIVE_PREFIX}${day}/${String(now).padStart(15, '0')}-${name}.jsonl`;
  await s3.send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`,
      ContentType: 'application/x-ndjson',
    }),
  );
  return key;
}

/** `s3://bucket[/prefix]` as bucket and prefix (the archive's own prefix when none is given). */
export function parseS3Url(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new Error(`${url}: expected s3://BUCKET or s3://BUCKET/PREFIX`);
  return { bucket: match[1] as string, prefix: match[2] || ARCHIVE_PREFIX };
}

/** The bucket's archive objects under `prefix`, oldest first (keys sort by day and time). */
export function bucketSource(s3: S3Client, url: string): ArchiveSource {
  const { bucket, prefix } = parseS3Url(url);
  return {
    where: url,
    files: async () => {
      const names: string[] = [];
      let token: string | undefined;
      do {
        const page = await s3.send(
          new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
        );
        for (const object of page.Contents ?? []) if (object.Key?.endsWith('.jsonl')) names.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return names.sort().map((name) => ({ name, day: /(\d{4}-\d{2}-\d{2})/.exec(name)?.[1] ?? '' }));
    },
    text: async (name) => {
      const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: name }));
      return (await object.Body?.transformToString('utf8')) ?? '';
    },
  };
}
