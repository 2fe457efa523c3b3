import { defineConfig } from 'vitest/config';
import { cliBundleSetup, serialUnitFiles, unitTimeouts } from './vitest.shared';

// The unit files whose assertions bound wall time, one at a time on a machine nothing else loads.
export default defineConfig({
  test: {
    include: serialUnitFiles,
    environment: 'node',
    ...unitTimeouts,
    globalSetup: [cliBundleSetup],
    fileParallelism: false,
    reporters: ['default'],
  },
});
