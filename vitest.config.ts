import { defineConfig } from 'vitest/config';
import { cliBundleSetup, SlowestFirst, unitTimeouts } from './vitest.shared';

// Unit tests, two files at a time: the project's machines have two cores and most files are
// one busy thread (tfjs wasm, QuickJS).
export default defineConfig({
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
    ...unitTimeouts,
    globalSetup: [cliBundleSetup],
    fileParallelism: true,
    // Files share a worker's modules (tfjs, the task generator) instead of importing them again:
    // ~2–3 s of CPU a file. Each file sets up the backend and sandbox it needs; counts of
    // global things (tfjs tensors) are taken as differences.
    isolate: false,
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
    reporters: ['default'],
  },
});
