import { defineConfig } from 'vitest/config';
import { serialUnitFiles, unitTimeouts } from './vitest.shared';

// The unit files whose assertions bound wall time, one at a time on a machine nothing else loads.
export default defineConfig({
  test: {
    include: serialUnitFiles,
    environment: 'node',
    ...unitTimeouts,
    fileParallelism: false,
    reporters: ['default'],
  },
});
