import * as z from 'zod/mini';
import {
  JOB_STATUSES,
  MAX_NAMESPACE_LENGTH,
  NAME_PATTERN,
  NAME_RULE,
  QUEUE_PREFIX_PATTERN,
} from '../../../engine/index.js';
import { RFC3339 } from '../start-at.js';

/*
 * The schemas of what a request names: path and query parameters. Each one's description is its
 * rule in words, written to finish "must be …": the API description shows it, and a value that
 * breaks it is refused with it (request-checks.ts). The router checks every parameter against its
 * schema after percent-decoding, so `team-b%2Fbilling` is refused as a name, never looked up as one.
 */

const rule = (description: string) => z.meta({ description });

/** A workflow, as the routes name it: its plain name within the request's namespace. */
export const WorkflowName = z.string().check(z.regex(NAME_PATTERN), rule(`a workflow name: ${NAME_RULE}`));

export const StepName = z.string().check(z.regex(NAME_PATTERN), rule(`a step name: ${NAME_RULE}`));

export const NamespaceName = z
  .string()
  .check(
    z.maxLength(MAX_NAMESPACE_LENGTH),
    z.regex(NAME_PATTERN),
    rule(`a namespace: ${NAME_RULE}, at most ${MAX_NAMESPACE_LENGTH} characters`),
  );

/** A job id: a UUID, in either case (it is stored in lower case). */
export const JobId = z
  .string()
  .check(
    z.regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/),
    z.meta({ description: 'a job id (a UUID)', format: 'uuid' }),
  );

/** A scoped token's id: the first 16 hex digits of its secret's SHA-256. */
/** Job ids, comma-separated: `GET /api/jobs?ids=`. */
export const JobIdList = z
  .string()
  .check(
    z.regex(/^[0-9a-fA-F-]{36}(,[0-9a-fA-F-]{36})*$/),
    z.maxLength(37 * 100),
    rule('job ids (UUIDs), comma-separated'),
  );

export const TokenId = z.string().check(z.regex(/^[0-9a-f]{16}$/), rule('a token id: 16 hex digits'));

/** A namespace's queue prefix: what RabbitMQ and SQS queue names both take (not `amq.`: the engine says why). */
export const QueuePrefix = z
  .string()
  .check(z.regex(QUEUE_PREFIX_PATTERN), rule('a queue prefix: 1 to 64 letters, digits, "_", "-" or "."'));

/** A RabbitMQ virtual host: 1 to 255 characters, none of them a control character. */
export const Vhost = z.string().check(
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  z.regex(/^[^\u0000-\u001f\u007f-\u009f]{1,255}$/),
  rule('a virtual host: 1 to 255 characters, no control characters'),
);

/** A page cursor as the previous page gave it (the store reads it back, and refuses a foreign one). */
export const PageCursor = z.string().check(z.maxLength(1024), rule('the cursor of the previous page'));

/** A fan-out's children page from this index on. */
export const ChildCursor = z
  .string()
  .check(z.regex(/^\d{1,9}$/), rule('the cursor of the previous page (a whole number)'));

export const JobStatusFilter = z
  .enum([...JOB_STATUSES, 'all'])
  .check(rule(`one of ${[...JOB_STATUSES, 'all'].join(', ')}`));

const FLAG_VALUES = ['1', 'true', 'yes', '0', 'false', 'no'] as const;

/** A yes-or-no query parameter: `1`, `true` or `yes` say yes. */
export const Flag = z.enum(FLAG_VALUES).check(rule(`one of ${FLAG_VALUES.join(', ')}`));

/** Whether a Flag's value says yes. */
export function flagSet(value: (typeof FLAG_VALUES)[number] | undefined): boolean {
  return value === '1' || value === 'true' || value === 'yes';
}

/**
 * A whole number in a query (`?limit=50`): JSON Schema's `integer` between the bounds given. Its text
 * is read as decimal digits (request-checks.ts); any other text is refused.
 */
export function wholeNumber(bounds: { min: number; max?: number }) {
  const range =
    bounds.max === undefined ? `of at least ${bounds.min}` : `from ${bounds.min} to ${bounds.max}`;
  return z
    .int()
    .check(
      z.minimum(bounds.min),
      ...(bounds.max === undefined ? [] : [z.maximum(bounds.max)]),
      rule(`a whole number ${range}`),
    );
}

/** An RFC 3339 date-time (start-at.ts reads it, and refuses an impossible or past one). */
export const DateTime = z.string().check(
  z.regex(RFC3339),
  z.meta({
    description: 'an RFC 3339 time such as "2026-12-01T06:00:00Z" or "2026-12-01T07:00:00+01:00"',
    format: 'date-time',
  }),
);

/** `If-None-Match`: entity tags, or `*`. */
export const EntityTags = z.string().check(rule('entity tags, or *'));

/** A file of the dashboard, beneath `/assets/` (looked up among the bundled files, never on disk). */
export const AssetPath = z.string().check(z.maxLength(200), rule('a path of at most 200 characters'));
