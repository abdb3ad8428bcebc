import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The long runs are `npm run soak` (vitest.soak.config.ts): one of them restarts the broker.
    exclude: [...configDefaults.exclude, 'test/soak/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default'],
  },
});
