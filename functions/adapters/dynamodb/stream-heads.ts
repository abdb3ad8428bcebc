import { gunzipSync } from 'node:zlib';
import {
  type JobJson,
  type JobStatus,
  type ListedStatus,
  listedStatusOf,
  splitQualifiedName,
} from '../../../engine/index.js';

/**
 * An attribute value in a DynamoDB stream record: binary values arrive base64-encoded in a Lambda
 * event and as bytes from the DynamoDB Streams API.
 */
export interface StreamAttribute {
  S?: string;
  N?: string;
  B?: string | Uint8Array;
  [other: string]: unknown;
}

export type StreamImage = Record<string, StreamAttribute>;

/** A job head as one stream image shows it (the item layout is job-items.ts). */
export interface StreamHead {
  jobId: string;
  /** The stored (qualified) workflow name, and its namespace and plain name. */
  qualifiedWorkflow: string;
  namespace: string;
  workflow: string;
  status: JobStatus;
  listedStatus: ListedStatus;
  rev: number;
  parentId?: string;
  /** The job's JSON when the head holds it inline; absent when it is cut into chunk items. */
  job?: JobJson;
}

/**
 * The job head an image shows, or undefined when the image is not one: another item of the table, or a
 * head that holds only pending versions (`pv`: a child created by a large commit, not yet its own).
 */
export function streamHeadOf(image: StreamImage | undefined): StreamHead | undefined {
  const pk = image?.pk?.S;
  if (!image || !pk?.startsWith('JOB#') || image.sk?.S !== 'J' || image.pv !== undefined) return undefined;
  const status = image.st?.S as JobStatus | undefined;
  const qualifiedWorkflow = image.wf?.S;
  if (!status || !qualifiedWorkflow) return undefined;
  const job = inlineJob(image);
  const { namespace, name } = splitQualifiedName(qualifiedWorkflow);
  return {
    jobId: pk.slice('JOB#'.length),
    qualifiedWorkflow,
    namespace,
    workflow: name,
    status,
    listedStatus: job ? listedStatusOf(job) : listedStatusOfAttributes(image, status),
    rev: Number(image.rev?.N ?? 0),
    ...(image.par?.S ? { parentId: image.par.S } : {}),
    ...(job ? { job } : {}),
  };
}

function inlineJob(image: StreamImage): JobJson | undefined {
  const text = image.j?.S;
  if (text !== undefined) return JSON.parse(text) as JobJson;
  const zipped = image.z?.B;
  if (zipped === undefined) return undefined;
  const bytes = typeof zipped === 'string' ? Buffer.from(zipped, 'base64') : zipped;
  return JSON.parse(gunzipSync(bytes).toString('utf8')) as JobJson;
}

/**
 * Without the JSON: a top-level head's listing key names its listed status (`L#<wf>#<status>#<shard>`,
 * items.ts); a child's waiting for someone cannot be told from its attributes.
 */
function listedStatusOfAttributes(image: StreamImage, status: JobStatus): ListedStatus {
  const listing = image.gsi1pk?.S?.split('#');
  const listed = listing && listing[0] === 'L' ? listing.at(-2) : undefined;
  return (listed as ListedStatus | undefined) ?? listedStatusOf({ status });
}
