import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './vitest.shared';

// Page tests: the built app (`vite build` first) served by `vite preview`, driven in
// Debian's headless Chromium through playwright-core. Two files at a time: one page on
// SwiftShader keeps about 1.4 of the two cores busy, so a second one fills the rest
// (376 s → 267 s for the phase here).
export default defineConfig({
  test: {
    include: ['tests/browser/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['tests/browser/serve.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
  },
});
