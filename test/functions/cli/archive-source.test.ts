import { describe, expect, it } from 'vitest';
import { parseS3Url } from '../../../functions/adapters/s3/archive-bucket.js';
import { archiveSource } from '../../../functions/cli/commands/archive.js';

describe('switchyard archive: where it reads', () => {
  it('reads serve’s directory by default, one downloaded object with --file, the bucket with --s3', () => {
    expect(archiveSource({}).where).toBe('switchyard-archive');
    expect(archiveSource({ dir: 'elsewhere' }).where).toBe('elsewhere');
    expect(archiveSource({ file: 'jobs.jsonl' }).where).toBe('jobs.jsonl');
    expect(archiveSource({ s3: 's3://my-archive' }).where).toBe('s3://my-archive');
  });

  it('refuses --s3 with --file, and an S3 URL that names no bucket, saying what it expects', () => {
    expect(() => archiveSource({ s3: 's3://my-archive', file: 'jobs.jsonl' })).toThrow(
      'give one of --s3 and --file (or --dir)',
    );
    expect(() => archiveSource({ s3: 'https://my-archive.s3.amazonaws.com/' })).toThrow(
      'expected s3://BUCKET or s3://BUCKET/PREFIX',
    );
    expect(parseS3Url('s3://my-archive')).toEqual({ bucket: 'my-archive', prefix: 'jobs/' });
    expect(parseS3Url('s3://my-archive/jobs/2026-11-28/')).toEqual({
      bucket: 'my-archive',
      prefix: 'jobs/2026-11-28/',
    });
  });
});
