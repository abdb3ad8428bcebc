/**
 * The long crash-recovery run: the same test as test/e2e/crash-recovery.test.ts, which under
 * `npm run soak` (SWITCHYARD_SOAK=1) kills serve 25 times during a workload of about 540 jobs.
 */
import '../e2e/crash-recovery.test.js';
