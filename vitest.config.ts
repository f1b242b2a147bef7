import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Names the server a leg needs when it is absent, before any suite runs.
    globalSetup: ['test/helpers/servers.global.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: keep heavy suites from starving each other.
    maxWorkers: 2,
  },
});
