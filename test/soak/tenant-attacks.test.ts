/**
 * The long tenant-attack run: the same test as test/e2e/tenant-attacks.test.ts, which under
 * `npm run soak` (SWITCHYARD_SOAK=1) runs 12 rounds of attacks, each ended by a SIGKILL of serve.
 */
import '../e2e/tenant-attacks.test.js';
