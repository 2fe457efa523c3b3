import { defineConfig } from 'vitest/config';
import { cliBundleSetup } from './vitest.shared';

// `npm run test:long`: what truly needs minutes (the 0.5B shape, learning over many steps).
// `.ci/run` runs it after `npm test`; one file at a time, as each one loads the machine.
export default defineConfig({
  test: {
    include: ['tests/long/**/*.test.ts'],
    environment: 'node',
    globalSetup: [cliBundleSetup],
    testTimeout: 900_000,
    hookTimeout: 900_000,
    fileParallelism: false,
    reporters: ['default'],
  },
});
