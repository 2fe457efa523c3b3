// The unit suites' common settings, and the files that must run alone: their assertions
// bound wall time (sandbox deadlines and watchdogs, the hostile files' 10 s refusals, the
// kernels' self-check time), so they run after the others, one file at a time.
export const unitTimeouts = { testTimeout: 120_000, hookTimeout: 120_000 };

/** Builds the CLIs' bundle (scripts/cli.mjs) once, before any file spawns a CLI. */
export const cliBundleSetup = 'scripts/cli.mjs';

export const serialUnitFiles = [
  'tests/unit/sandbox.*.test.ts',
  'tests/unit/hostile*.test.ts',
  'tests/unit/kernels.selfCheck.test.ts',
];
