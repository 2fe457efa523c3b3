// The lab's own WebGPU engine: once enabled (where a real adapter exists, or on request) and its
// kernels have passed their self-check, rollout/kvSampler.ts and rl/trainer.ts hand every
// sample() and update to the kernels' one model (kernelRoles.ts, kernelRoleTraining.ts). A lost
// device (or any device error) turns the engine off for the rest of the run and the call
// returns null: the caller samples or updates on its own backend (wasm on a CPU), from the same
// step, with the same seeded streams.
import type { TransformerConfig } from '../../model/transformerConfig';
import { getKernelDevice, type KernelDevice } from '../kernels/device';
import { type MatmulVersion, SHADERS } from './ops';
import { GpuRuntime } from './runtime';
import {
  type CheckResult,
  describeFailure,
  type EngineSelfCheck,
  type SelfCheckSummary,
  selfCheckAtSizes,
  selfCheckAtStart,
  summarize,
} from './selfCheck';
import { checksFor, runConfigChecks } from './selfCheck/checksByConfig';
import type { KernelCheck } from './selfCheck/registry';
import { shaderOverridesForTest } from './selfCheck/testHook';

export interface KernelEngineReport {
  enabled: boolean;
  adapter: string;
  reason: string;
  /** The self-check's tally, when one ran on this adapter (also when every check passed). */
  selfCheck?: SelfCheckSummary;
}

export interface Engine {
  gpu: KernelDevice;
  rt: GpuRuntime;
  /** The matmul version this driver runs fastest among those the self-check passed (tune.ts). */
  matmul: MatmulVersion;
  /** What the self-check found on this device (selfCheck/). */
  selfCheck: EngineSelfCheck;
  lost: string | null;
  /** The checks beyond the start's that a config needed (engineFor), by name: whether all passed. */
  configChecks: Map<string, Promise<boolean>>;
}

/**
 * The first model of new sizes: the sized checks at its width, heads, MLP width and vocabulary
 * before the kernels run it. A kernel the engine needs that fails turns the kernels off.
 */
export async function checkModelSizes(e: Engine, c: TransformerConfig): Promise<void> {
  const sizes = { nEmbd: c.hidden, nHead: c.heads, nInner: c.intermediate, vocabSize: c.vocabSize };
  const label = `${c.hidden}×${c.heads} heads, MLP ${c.intermediate}, vocabulary ${c.vocabSize}`;
  const added = await selfCheckAtSizes(e.selfCheck, e.rt, { ...sizes, label }, e.gpu.software);
  if (added.length === 0) return;
  e.matmul = e.selfCheck.matmul;
  lastSelfCheck = { check: e.selfCheck, gpu: e.gpu };
  if (e.selfCheck.fatal.length > 0) {
    const why = failureWords(e.gpu.adapter, e.selfCheck.fatal);
    turnOff(e, why);
    throw new Error(why);
  }
  report = { ...report, selfCheck: summarize(e.selfCheck.results, e.gpu.adapter) };
}

function failureWords(adapter: string, failed: readonly CheckResult[]): string {
  return `the kernel self-check failed on ${adapter}: ${failed.map(describeFailure).join('; ')}`;
}

/** The last self-check, with its device, for the GPU report (gpuReport.ts). */
let lastSelfCheck: { check: EngineSelfCheck; gpu: KernelDevice } | null = null;

export function lastKernelSelfCheck(): { check: EngineSelfCheck; gpu: KernelDevice } | null {
  return lastSelfCheck;
}

let engine: Engine | null = null;
let report: KernelEngineReport = { enabled: false, adapter: '', reason: 'not enabled' };

/**
 * The start's self-check per adapter (with the shaders a test swapped in), for this process: an
 * engine started again on the same adapter — a new run, a device after a loss — reuses its
 * verdicts and the tuner's pick instead of checking every kernel again (seconds on a CPU
 * driver; the same adapter and sources give the same answers). Checks at a model's sizes and
 * those a config needs (engineFor) still run once per engine.
 */
const startChecks = new Map<string, EngineSelfCheck>();

function copyOfCheck(check: EngineSelfCheck): EngineSelfCheck {
  return {
    ...check,
    results: [...check.results],
    allowed: [...check.allowed],
    fatal: [...check.fatal],
    sizes: new Set(check.sizes),
  };
}

/**
 * Every shader the engine runs, into `rt`, with the sources a test swapped in
 * (selfCheck/testHook.ts); returns those swaps, which key what a self-check found.
 */
export async function loadEngineShaders(rt: GpuRuntime): Promise<Readonly<Record<string, string>>> {
  await rt.load([...SHADERS]);
  const overrides = shaderOverridesForTest();
  for (const [shader, code] of Object.entries(overrides)) rt.replaceSource(shader, code);
  return overrides;
}

/**
 * Turns the device engine on where a real (non-software) adapter exists; `allowSoftware`
 * accepts SwiftShader / lavapipe too (tests, benches). `device` replaces the shared one.
 */
export async function enableKernelEngine(
  options: { allowSoftware?: boolean; device?: KernelDevice; onSelfCheck?: () => void } = {},
): Promise<KernelEngineReport> {
  let gpu = options.device;
  if (!gpu) {
    const opened = await getKernelDevice();
    if (!opened.ok) return setReport(false, '', `no WebGPU adapter (${opened.why})`);
    gpu = opened.gpu;
  }
  if (gpu.software && !options.allowSoftware)
    return setReport(false, gpu.adapter, 'a software adapter only: tfjs wasm is faster on a CPU');
  const rt = new GpuRuntime(gpu.device);
  let overrides: Readonly<Record<string, string>>;
  try {
    overrides = await loadEngineShaders(rt);
  } catch (error) {
    // Outside Vite the sources are read from disk (kernels/loadShader.ts); that can fail.
    return setReport(false, gpu.adapter, `shaders not loaded (${String(error)})`);
  }
  // Every kernel and matmul version on fresh seeded inputs against its TypeScript reference,
  // before any of them takes a run; the tuner times only the versions that passed. Once per
  // adapter per process (startChecks).
  const checkKey = JSON.stringify([gpu.adapter, gpu.software, overrides]);
  let selfCheck: EngineSelfCheck;
  const checked = startChecks.get(checkKey);
  if (checked) selfCheck = copyOfCheck(checked);
  else {
    options.onSelfCheck?.();
    try {
      selfCheck = await selfCheckAtStart(rt, gpu.software);
    } catch (error) {
      return setReport(false, gpu.adapter, `the kernel self-check did not run (${String(error)})`);
    }
    startChecks.set(checkKey, copyOfCheck(selfCheck));
  }
  lastSelfCheck = { check: selfCheck, gpu };
  const summary = summarize(selfCheck.results, gpu.adapter);
  if (selfCheck.fatal.length > 0) {
    rt.destroy();
    return {
      ...setReport(false, gpu.adapter, failureWords(gpu.adapter, selfCheck.fatal)),
      selfCheck: summary,
    };
  }
  const current: Engine = {
    gpu,
    rt,
    matmul: selfCheck.matmul,
    selfCheck,
    lost: null,
    configChecks: new Map(),
  };
  engine = current;
  void gpu.device.lost.then((info) => {
    current.lost = info.message || info.reason;
    // Said at once, not at the next device call: the backend line should not lag.
    turnOff(current, `the GPU device was lost (${current.lost})`);
  });
  report = {
    enabled: true,
    adapter: gpu.adapter,
    reason: "sampling and updates on the lab's WebGPU kernels",
    selfCheck: summary,
  };
  return report;
}

/** The report after, and why in a few words (`the GPU device was lost (destroyed)`). */
type OffListener = (report: KernelEngineReport, why: string) => void;
const offListeners = new Set<OffListener>();

/** Called when the engine turns itself off mid-run (device lost or failed); returns an unsubscribe. */
export function onKernelEngineOff(listener: OffListener): () => void {
  offListeners.add(listener);
  return () => offListeners.delete(listener);
}

/** The engine `e` failed: off for the rest of the run, the tfjs backend takes its work. */
function turnOff(e: Engine, why: string): void {
  if (engine !== e) return;
  engine = null;
  const off = setReport(false, e.gpu.adapter, `${why}; the run continues on the tfjs backend`);
  off.selfCheck = summarize(e.selfCheck.results, e.gpu.adapter);
  for (const listener of offListeners) listener(off, why);
}

/** Test only: destroys the engine's device mid-run, as a lost GPU or a driver reset would. */
export function destroyKernelDevice(): boolean {
  if (!engine) return false;
  engine.gpu.device.destroy();
  return true;
}

export function disableKernelEngine(): void {
  engine = null;
  setReport(false, report.adapter, 'turned off');
}

/** The engine while it is on, for the device trainer. */
export function kernelEngine(): Engine | null {
  return engine && !engine.lost ? engine : null;
}

/**
 * The engine with the kernels a model of this config needs beyond the start's checked
 * (selfCheck/checksByConfig.ts' checksFor: its switches', the 16-bit weights', LoRA's, the
 * device's draw, attention at its head size), each once per engine, when a role of that config
 * first reaches it: a full-parameter GPT-2 run's start does not pay for them. No config: every
 * such check (the GPU report's). Null where the engine is off, or where one failed: then the
 * kernels turn off, the backend line says which kernel failed with its numbers, and the run
 * goes on on tfjs.
 */
export async function engineFor(config: TransformerConfig | null): Promise<Engine | null> {
  const e = kernelEngine();
  if (!e) return null;
  const needed = checksFor(config);
  const started = e.configChecks;
  const fresh = needed.filter((c) => !started.has(c.name));
  if (fresh.length > 0) {
    const run = runConfigKernelChecks(e, fresh);
    for (const c of fresh) started.set(c.name, run);
  }
  const passed = await Promise.all(needed.map((c) => started.get(c.name)));
  return passed.every(Boolean) ? kernelEngine() : null;
}

async function runConfigKernelChecks(e: Engine, checks: readonly KernelCheck[]): Promise<boolean> {
  let results: CheckResult[];
  try {
    results = await runConfigChecks(e.rt, e.gpu.software, checks);
  } catch (error) {
    markEngineFailed(e, error);
    return false;
  }
  e.selfCheck.results.push(...results);
  lastSelfCheck = { check: e.selfCheck, gpu: e.gpu };
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0) {
    turnOff(e, failureWords(e.gpu.adapter, failed));
    return false;
  }
  if (engine === e)
    report = { ...report, selfCheck: summarize(e.selfCheck.results, e.gpu.adapter) };
  return true;
}

/** A device call failed: the engine is off for the rest of the run. */
export function markEngineFailed(e: object, error: unknown): void {
  if (engine !== e || !engine) return;
  const why = error instanceof Error ? error.message : String(error);
  turnOff(engine, `the GPU device failed (${why})`);
}

export function kernelEngineReport(): KernelEngineReport {
  return report;
}

function setReport(enabled: boolean, adapter: string, reason: string): KernelEngineReport {
  report = { enabled, adapter, reason };
  return report;
}
