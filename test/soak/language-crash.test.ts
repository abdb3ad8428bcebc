/**
 * The long run of issue 30's soak: the same test as test/e2e/language-crash.test.ts, which under
 * `npm run soak` (SWITCHYARD_SOAK=1) kills serve 15 times while 300 sleeping, looping and
 * callback-waiting jobs run.
 */
import '../e2e/language-crash.test.js';
