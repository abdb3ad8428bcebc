import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The long runs are `npm run soak` (vitest.soak.config.ts): one of them restarts the broker.
    exclude: [...configDefaults.exclude, 'test/soak/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // expect.poll's own default (1 s) is shorter than what a loaded 2-core machine takes for a pump's
    // round or a browser's redraw; a poll still ends at its first match.
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default'],
  },
});
