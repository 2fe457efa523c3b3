import { defineConfig } from 'vitest/config';

// Page tests: the built app (`vite build` first) served by `vite preview`, driven in
// Debian's headless Chromium through playwright-core.
export default defineConfig({
  test: {
    include: ['tests/browser/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['tests/browser/serve.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
