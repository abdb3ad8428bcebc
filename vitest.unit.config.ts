import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The fast loop (`npm run test:unit`): the pure engine's tests need no broker, so the global check
// that RabbitMQ answers is left out.
export default defineConfig({
  test: { ...base.test, include: ['test/engine/**/*.test.ts'], globalSetup: [] },
});
