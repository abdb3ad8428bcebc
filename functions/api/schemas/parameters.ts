import * as z from 'zod/mini';
import {
  DELIVERY_STATES,
  LISTED_STATUSES,
  MAX_ATTRIBUTE_VALUE_LENGTH,
  MAX_NAMESPACE_LENGTH,
  MAX_SEARCH_ATTRIBUTES,
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

/** A step, or a path to a step of a job beneath (engine/job/step-path.ts): `publish/approve`, `review[2]/approve`. */
export const StepPath = z
  .string()
  .check(
    z.maxLength(2000),
    z.regex(/^([A-Za-z][A-Za-z0-9_-]*(\[\d{1,9}\])?\/)*[A-Za-z][A-Za-z0-9_-]*$/),
    rule(
      `a step name (${NAME_RULE}), or a path to one through workflow: steps and fan-out children (call/step, fanout[2]/step)`,
    ),
  );

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

/** An audit page from this entry on (an entry's id). */
export const AuditCursor = z
  .string()
  .check(z.regex(/^\d{13}-[0-9a-f]{8}$/), rule('the cursor of the previous page'));

export const DeliveryCursor = z
  .string()
  .check(
    z.regex(/^\d{13}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
    rule('the cursor of the previous page'),
  );

export const DeliveryStateName = z.enum(DELIVERY_STATES).check(rule(`one of ${DELIVERY_STATES.join(', ')}`));

/** A fan-out's children page from this index on. */
export const ChildCursor = z
  .string()
  .check(z.regex(/^\d{1,9}$/), rule('the cursor of the previous page (a whole number)'));

export const JobStatusFilter = z
  .enum([...LISTED_STATUSES, 'all'])
  .check(rule(`one of ${[...LISTED_STATUSES, 'all'].join(', ')}`));

/** A time in a query: an RFC 3339 time (`2026-11-27T10:00:00Z`) or milliseconds since the epoch. */
const QUERY_TIME =
  /^(?:(\d{1,15})|(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d{1,9})?([Zz]|([+-])([01]\d|2[0-3]):([0-5]\d)))$/;

export const QueryTime = z
  .string()
  .check(
    z.regex(QUERY_TIME),
    rule('an RFC 3339 time such as 2026-11-27T10:00:00Z, or milliseconds since the epoch'),
  );

/** The time a `QueryTime` names, in ms since the epoch (a day past its month's end runs on into the next). */
export function queryTimeMs(text: string): number | undefined {
  const match = QUERY_TIME.exec(text);
  if (!match) return undefined;
  if (match[1] !== undefined) return Number(match[1]);
  const [year, month, day, hour, minute, second] = match.slice(2, 8).map(Number) as number[];
  const fraction = match[8] ? Math.trunc(Number(match[8]) * 1000) : 0;
  const sign = match[10] === '-' ? -1 : 1;
  const offset = match[10] ? sign * (Number(match[11]) * 60 + Number(match[12])) * 60_000 : 0;
  return Date.UTC(year as number, (month as number) - 1, day, hour, minute, second, fraction) - offset;
}

/** `name=value`, several separated by commas: search attributes (a workflow's `searchAttributes:`). */
const ATTRIBUTE_PAIR = `[A-Za-z][A-Za-z0-9_-]{0,63}=[^,]{0,${MAX_ATTRIBUTE_VALUE_LENGTH}}`;
const ATTRIBUTE_FILTER = new RegExp(
  `^${ATTRIBUTE_PAIR}(?:,${ATTRIBUTE_PAIR}){0,${MAX_SEARCH_ATTRIBUTES - 1}}$`,
);

export const AttributeFilter = z
  .string()
  .check(
    z.regex(ATTRIBUTE_FILTER),
    rule(
      `NAME=VALUE pairs separated by commas, e.g. customer=c-42,region=eu (at most ${MAX_SEARCH_ATTRIBUTES}; names as searchAttributes: declares them)`,
    ),
  );

/** The attributes an `AttributeFilter` names (a name given twice: its last value). */
export function attributeFilterOf(text: string): Record<string, string> | undefined {
  if (!ATTRIBUTE_FILTER.test(text)) return undefined;
  const attributes: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    attributes[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return attributes;
}

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

/** An attempt's callback token, as its request carried it (`x-switchyard-token`; protocol.md). */
export const CallbackToken = z
  .string()
  .check(
    z.maxLength(4096),
    z.regex(/^swt1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/),
    rule("an attempt's callback token (swt1.….…), as its request carried it"),
  );

export const CallbackType = z
  .enum(['success', 'failure', 'heartbeat', 'suspend'])
  .check(rule('one of success, failure, heartbeat, suspend'));

export const AnyJsonObject = z.record(z.string(), z.unknown()).check(rule('a JSON object'));

export const Text = z.string().check(z.maxLength(4000), rule('text of at most 4,000 characters'));

export const Bool = z.boolean().check(rule('true or false'));
