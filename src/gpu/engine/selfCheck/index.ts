// The self-check the engine runs before its kernels take a run (kernelEngine.ts): at start,
// every registered check at the tiny preset's sizes — the matmul versions first, so the tuner
// times only those that passed — and again, for the `sized` checks, at a model's own sizes the
// first time a model of those sizes reaches the engine.
import { PRESETS } from '../../../model/config';
import { MATMUL_VERSIONS, type MatmulVersion } from '../ops';
import type { GpuRuntime } from '../runtime';
import { fastestOf, type MatmulTuning, tuneMatmulTimed } from './../tune';
import './checks'; // registers the lab's kernels
import { type KernelCheck, kernelChecks } from './registry';
import { runChecks } from './run';
import type { CheckResult, CheckSizes } from './types';

export interface EngineSelfCheck {
  results: CheckResult[];
  /** Matmul versions no check has failed. */
  allowed: MatmulVersion[];
  tuning: MatmulTuning;
  /** The version the engine runs: the fastest allowed. */
  matmul: MatmulVersion;
  /** Failures of kernels the engine cannot do without: any turns the kernels off. */
  fatal: CheckResult[];
  /** Sizes already checked (sizesKey). */
  sizes: Set<string>;
}

/** The tiny preset (the default run) with the shipped tokenizer's vocabulary. */
export const START_SIZES: CheckSizes = {
  nEmbd: PRESETS.tiny.nEmbd,
  nHead: PRESETS.tiny.nHead,
  nInner: 4 * PRESETS.tiny.nEmbd,
  vocabSize: 617,
  label: 'start',
};

export const sizesKey = (s: Omit<CheckSizes, 'label'>) =>
  `${s.nEmbd}/${s.nHead}/${s.nInner}/${s.vocabSize}`;

/** Seed of the checks' inputs (each check derives its own stream from it and its name). */
export const SELF_CHECK_SEED = 0x5e1fc4ec;

export async function selfCheckAtStart(
  rt: GpuRuntime,
  software: boolean,
  seed = SELF_CHECK_SEED,
): Promise<EngineSelfCheck> {
  const checks = kernelChecks();
  const first = await runChecks(
    checks.filter((c) => c.matmulVersion),
    { rt, sizes: START_SIZES, matmul: 'v1_regblock', software, seed },
  );
  const allowed = MATMUL_VERSIONS.filter((v) => !failedVersions(checks, first).has(v));
  const tuning = await tuneMatmulTimed(rt, allowed.length ? allowed : ['v1_regblock']);
  const state: EngineSelfCheck = {
    results: first,
    allowed,
    tuning,
    matmul: tuning.pick,
    fatal: [],
    sizes: new Set([sizesKey(START_SIZES)]),
  };
  const rest = await runChecks(
    checks.filter((c) => !c.matmulVersion),
    { rt, sizes: START_SIZES, matmul: state.matmul, software, seed },
  );
  state.results.push(...rest);
  state.fatal = fatalOf(checks, state.results);
  return state;
}

/** The `sized` checks at a model's own sizes (once per sizes); returns the new results. */
export async function selfCheckAtSizes(
  state: EngineSelfCheck,
  rt: GpuRuntime,
  sizes: CheckSizes,
  software: boolean,
  seed = SELF_CHECK_SEED,
): Promise<CheckResult[]> {
  const key = sizesKey(sizes);
  if (state.sizes.has(key)) return [];
  state.sizes.add(key);
  const checks = kernelChecks().filter((c) => c.sized);
  const first = await runChecks(
    checks.filter((c) => c.matmulVersion && state.allowed.includes(c.matmulVersion)),
    { rt, sizes, matmul: state.matmul, software, seed },
  );
  const dropped = failedVersions(checks, first);
  state.allowed = state.allowed.filter((v) => !dropped.has(v));
  state.matmul = fastestOf(state.tuning, state.allowed) ?? 'v1_regblock';
  const rest = await runChecks(
    checks.filter((c) => !c.matmulVersion),
    { rt, sizes, matmul: state.matmul, software, seed },
  );
  const added = [...first, ...rest];
  state.results.push(...added);
  state.fatal = fatalOf(kernelChecks(), state.results);
  return added;
}

function failedVersions(
  checks: readonly KernelCheck[],
  results: CheckResult[],
): Set<MatmulVersion> {
  const out = new Set<MatmulVersion>();
  for (const r of results) {
    const version = checks.find((c) => c.name === r.name)?.matmulVersion;
    if (!r.ok && version) out.add(version);
  }
  return out;
}

function fatalOf(checks: readonly KernelCheck[], results: CheckResult[]): CheckResult[] {
  return results.filter(
    (r) => !r.ok && checks.find((c) => c.name === r.name)?.indispensable === true,
  );
}

export type { CheckContext, KernelCheck } from './registry';
export { registerKernelCheck } from './registry';
export * from './types';
