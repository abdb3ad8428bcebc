import {
  DeleteQueueCommand,
  ListQueuesCommand,
  ListQueueTagsCommand,
  QueueDoesNotExist,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** Which queues are the stack's: under its prefix, tagged with it, and not one CloudFormation manages. */
export interface StackQueues {
  prefix: string;
  tag: { key: string; value: string };
  /** Names of the queues the stack itself declares: CloudFormation deletes those. */
  declared: readonly string[];
}

/** ListQueues answers at most 1000 URLs a page: 100 pages is far beyond any stack's step queues. */
const MAX_PAGES = 100;

export interface RemovedQueues {
  removed: string[];
  /** Queues under the prefix left alone: another tag (or none), or declared by the stack. */
  kept: string[];
}

/**
 * Deletes the queues the stack's functions created at run time (workflows registered after the
 * deploy): every queue under the prefix that carries the stack's tag, except those the stack declares.
 * Every queue is tried; the failures are reported together at the end.
 */
export async function removeRunTimeQueues(client: SQSClient, stack: StackQueues): Promise<RemovedQueues> {
  const declared = new Set(stack.declared);
  const result: RemovedQueues = { removed: [], kept: [] };
  const failures: string[] = [];
  for (const url of await listQueueUrls(client, stack.prefix)) {
    const name = url.slice(url.lastIndexOf('/') + 1);
    if (!name.startsWith(stack.prefix) || declared.has(name)) {
      result.kept.push(name);
      continue;
    }
    try {
      const tags = await tagsOf(client, url);
      if (tags?.[stack.tag.key] !== stack.tag.value) {
        result.kept.push(name);
        continue;
      }
      await client.send(new DeleteQueueCommand({ QueueUrl: url }));
      result.removed.push(name);
    } catch (error) {
      if (error instanceof QueueDoesNotExist) continue;
      failures.push(`${name}: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    }
  }
  if (failures.length > 0) {
    throw new Error(`could not remove ${failures.length} run-time queue(s):\n${failures.join('\n')}`);
  }
  return result;
}

/**
 * The queue's tags; undefined when IAM refuses to read them: the role may read only queues tagged with
 * its stack (infra/constructs/run-time-queue-removal.ts), so a refusal means the queue is not the stack's.
 */
async function tagsOf(client: SQSClient, url: string): Promise<Record<string, string> | undefined> {
  try {
    return (await client.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags ?? {};
  } catch (error) {
    if (error instanceof Error && /^AccessDenied/.test(error.name)) return undefined;
    throw error;
  }
}

async function listQueueUrls(client: SQSClient, prefix: string): Promise<string[]> {
  const urls: string[] = [];
  let nextToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await client.send(
      new ListQueuesCommand({ QueueNamePrefix: prefix, MaxResults: 1000, NextToken: nextToken }),
    );
    urls.push(...(answer.QueueUrls ?? []));
    nextToken = answer.NextToken;
    if (!nextToken) return urls;
  }
  throw new Error(`more than ${MAX_PAGES * 1000} queues under ${prefix}: not removed`);
}
