import { defineConfig } from 'vitest/config';

/**
 * `npm run soak`: the long reliability runs of test/soak (RELIABILITY.md), one file at a time, since
 * some of them restart the shared RabbitMQ broker and all of them load the machine on their own.
 */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.test.ts'],
    testTimeout: 60 * 60_000,
    hookTimeout: 10 * 60_000,
    expect: { poll: { timeout: 15_000 } },
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default'],
  },
});
