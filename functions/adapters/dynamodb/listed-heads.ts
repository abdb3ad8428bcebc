import { gsi, S, SHARDS, time } from './items.js';
import { workflowsWithJobs } from './job-counts.js';
import type { DynamoDbTable, Item, Key } from './table.js';

/**
 * The heads of top-level jobs listed under `statuses` (gsi1 `L#<workflow>#<status>#<shard>`, by
 * creation time) and created before `createdBefore`, read from the table as they are now (the index
 * holds keys only), a page at a time: what retention's sweep and the trees' keep-alive walk.
 */
export async function* listedHeads(
  table: DynamoDbTable,
  statuses: readonly string[],
  createdBefore: number,
): AsyncGenerator<Item> {
  for (const workflow of await workflowsWithJobs(table)) {
    for (const status of statuses) {
      for (let shard = 0; shard < SHARDS.listing; shard++) {
        let start: Item | undefined;
        do {
          const page = await table.queryPage({
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :p AND gsi1sk < :before',
            ExpressionAttributeValues: {
              ':p': S(gsi.listing(workflow, status, shard)),
              ':before': S(time(createdBefore)),
            },
            ExclusiveStartKey: start,
          });
          yield* await table.batchGet(page.items.map((entry) => ({ pk: entry.pk, sk: entry.sk }) as Key));
          start = page.next;
        } while (start);
      }
    }
  }
}
