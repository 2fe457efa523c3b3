import { BaseSequencer, type TestSpecification } from 'vitest/node';

// The unit suites' common settings. The files whose assertions bound wall time (sandbox
// deadlines and watchdogs, the hostile files' 10 s refusals) run with the others: their bounds
// hold with three busy loops on this machine's two cores beside them (measured: 117 of 117,
// three rounds), and a phase of their own left a core idle for ~40 s.
export const unitTimeouts = { testTimeout: 120_000, hookTimeout: 120_000 };

/** Builds the CLIs' bundle (scripts/cli.mjs) once, before any file spawns a CLI. */
export const cliBundleSetup = 'scripts/cli.mjs';

/**
 * Files run slowest first (measured: `npm test`'s JSON reports; last on 2026-12-04, after the
 * tfjs step got 1.8× faster), so that the two workers end together: in a fresh clone vitest has
 * no durations and orders by file size, which left the 62 s learning test running alone at the
 * end of the unit phase (~40 s of an idle core).
 */
const slowestFiles = [
  // tests/unit
  'baseRolesKernels',
  'engine-learning',
  'cliTrain',
  'kernels.wiring',
  'baseRoles',
  'kernels.decode',
  'kernels.selfCheck',
  'loraCli',
  'tasks.sandbox',
  'cliErrors',
  'deviceLlamaLora',
  'ggufLlamaCpp',
  'rewardServer',
  'tasks.generate',
  'microBatch',
  'cliModelHf',
  // tests/browser
  'lab',
  'hubBase',
  'recovery',
  'explainer',
  'hubConsent',
  'teaching',
  'playground',
  'runs',
  'selfCheck',
  'defaults',
  'settings',
  'agents',
  'lesson',
  'charts',
];

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = slowestFiles.findIndex((name) => file.moduleId.endsWith(`/${name}.test.ts`));
      return index < 0 ? slowestFiles.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
