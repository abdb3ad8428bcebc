/**
 * The long concurrency run: concurrent, duplicated, reordered replies on SQLite and on DynamoDB Local
 * with several managers, as in `npm test` but with the soak's run counts (SWITCHYARD_SOAK=1).
 */
import '../functions/manager/concurrent-replies.test.js';
