import { defineConfig } from 'vitest/config';
import { bundledDeps, serialUnitFiles, unitTimeouts } from './vitest.shared';

// The unit files whose assertions bound wall time, one at a time on a machine nothing else loads.
export default defineConfig({
  test: {
    include: serialUnitFiles,
    environment: 'node',
    ...unitTimeouts,
    deps: bundledDeps,
    fileParallelism: false,
    reporters: ['default'],
  },
});
