import type { AttributeValue as LambdaAttributeValue } from 'aws-lambda';
import type { JobRecord } from '../../engine/index.js';
import { encodeJson, keys } from '../../functions/adapters/dynamodb/items.js';
import { HEAD_INLINE_LIMIT, headItem } from '../../functions/adapters/dynamodb/job-items.js';
import type { Item } from '../../functions/adapters/dynamodb/table.js';

/** An item as a Lambda stream event shows it: B values base64, as the stream's JSON carries them. */
export function lambdaImage(item: Item): Record<string, LambdaAttributeValue> {
  return Object.fromEntries(
    Object.entries(item).map(([name, value]) => [
      name,
      (value.B ? { B: Buffer.from(value.B).toString('base64') } : value) as LambdaAttributeValue,
    ]),
  );
}

/** A job's head item as the DynamoDB store writes it (job-items.ts). */
export function headOf(job: JobRecord): Item {
  const json = encodeJson(job, HEAD_INLINE_LIMIT, keys.jobPk(job.id), 'token');
  return headItem(job, json.attrs, [], undefined);
}
