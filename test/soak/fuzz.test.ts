/**
 * The long generated-input runs: the same properties as in `npm test`, with the soak's run counts
 * (SWITCHYARD_SOAK=1; see test/support/soak.ts and RELIABILITY.md).
 */
import '../functions/api/api-fuzz.test.js';
import '../functions/api/put-definitions.test.js';
import '../engine/expressions/bounded-evaluation.property.test.js';
