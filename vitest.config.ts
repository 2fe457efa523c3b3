import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Two cores on the project's machines: one file at a time keeps timings honest.
    fileParallelism: false,
    reporters: ['default'],
  },
});
