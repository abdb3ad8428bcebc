import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The fast loop (`npm run test:unit`): the engine's and the layering's tests need no broker, so the global check
// that RabbitMQ answers is left out.
export default defineConfig({
  test: {
    ...base.test,
    include: ['test/engine/**/*.test.ts', 'test/architecture/**/*.test.ts'],
    globalSetup: [],
  },
});
