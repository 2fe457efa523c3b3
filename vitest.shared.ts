// The unit suites' common settings, and the files that must run alone: their assertions
// bound wall time (sandbox deadlines and watchdogs, the hostile files' 10 s refusals, the
// kernels' self-check time), so they run after the others, one file at a time.
export const unitTimeouts = { testTimeout: 120_000, hookTimeout: 120_000 };

/**
 * tfjs-core's ESM is ~600 files with extensionless imports: each test file that imports it
 * paid several seconds to transform and evaluate them. Pre-bundled once per install instead
 * (node_modules/.vite). The wasm and webgpu backends stay unbundled: their wasm and Dawn
 * loaders find files beside their own sources.
 */
export const bundledDeps = {
  optimizer: {
    ssr: {
      enabled: true,
      include: [
        '@tensorflow/tfjs-core',
        '@tensorflow/tfjs-core/dist/register_all_gradients',
        '@tensorflow/tfjs-backend-cpu',
      ],
    },
  },
};

export const serialUnitFiles = [
  'tests/unit/sandbox.*.test.ts',
  'tests/unit/hostile*.test.ts',
  'tests/unit/kernels.selfCheck.test.ts',
];
