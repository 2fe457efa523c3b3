// Where a device training step's time goes: each dispatch of one GRPO step (forward, loss,
// backward, AdamW) replayed alone and timed, summed by kernel. A tool for tuning the kernels,
// not a benchmark table: `npx vite-node bench/webgpuProfile.ts` (BENCH_PRESETS=small, and
// VK_ICD_FILENAMES for lavapipe as TESTING.md sets it up).
import { DeviceModel } from '../src/gpu/engine/deviceModel';
import { type GrpoOptions, SHADERS } from '../src/gpu/engine/ops';
import { GpuRuntime, Program } from '../src/gpu/engine/runtime';
import { tuneMatmul } from '../src/gpu/engine/tune';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { makeConfig, type PresetName } from '../src/model/config';
import { initialValues } from '../src/model/params';
import { Rng } from '../src/tasks/random';

const PRESET = (process.env.BENCH_PRESETS ?? 'small').split(',')[0] as PresetName;
const B = Number(process.env.BENCH_TRAIN_B ?? 8);
const T = Number(process.env.BENCH_TRAIN_T ?? 96);
const REPEAT = 5;

const opened = await getKernelDevice();
if (!opened.ok) throw new Error(opened.why);
const rt = new GpuRuntime(opened.gpu.device);
await rt.load([...SHADERS]);
const config = makeConfig(PRESET, 617, 'coder');
const dm = new DeviceModel(rt, config, initialValues(config, 1));
dm.matmulVersion = (process.env.MATMUL as typeof dm.matmulVersion) ?? (await tuneMatmul(rt));
const prng = new Rng(2);
const R = B * T;
const ids = Uint32Array.from({ length: R }, () => prng.below(617));
const weight = Float32Array.from({ length: R }, (_, r) => (r % T >= T / 3 ? 1 / R : 0));
const batch = {
  B,
  T,
  ids,
  oldLogp: new Float32Array(R).fill(-6),
  refLogp: new Float32Array(R).fill(-6),
  advantage: Float32Array.from({ length: R }, () => prng.normal()),
  weight,
};
const grpo: GrpoOptions = { epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 };
const opts = { ...grpo, lr: 1e-4, maxGradNorm: 1, temperature: 0.7 };
await dm.trainStep(batch, opts); // compile
let start = performance.now();
await dm.trainStep(batch, opts);
const whole = performance.now() - start;

// The step's programs, as trainStep recorded them (private: reached for here only).
const acts = (
  dm as unknown as {
    activations(B: number, T: number, invTemp: number): { parts(o: GrpoOptions): Program[] };
  }
).activations(B, T, 1 / opts.temperature);
const programs = acts.parts(grpo);
const byLabel = new Map<string, { ms: number; count: number }>();
let total = 0;
for (const program of programs)
  for (const d of program.dispatches) {
    const one = new Program([d]);
    rt.submit([one]);
    await rt.device.queue.onSubmittedWorkDone();
    start = performance.now();
    rt.submit([one], REPEAT);
    await rt.device.queue.onSubmittedWorkDone();
    const ms = (performance.now() - start) / REPEAT;
    total += ms;
    const entry = byLabel.get(d.label) ?? { ms: 0, count: 0 };
    entry.ms += ms;
    entry.count++;
    byLabel.set(d.label, entry);
  }
console.log(
  `${opened.gpu.adapter}\n${PRESET}, ${B}×${T}, matmul ${dm.matmulVersion}: whole step ${whole.toFixed(1)} ms, dispatches alone ${total.toFixed(1)} ms (without AdamW)`,
);
const rows = [...byLabel].sort((a, b) => b[1].ms - a[1].ms);
for (const [label, { ms, count }] of rows) {
  // A matmul's label carries its shape: its rate in GFLOP/s beside it.
  const shape = /^matmul (\d+)×(\d+)ᵀ?·\d+×(\d+)/.exec(label);
  const rate = shape
    ? `  ${((2 * Number(shape[1]) * Number(shape[2]) * Number(shape[3]) * count) / (ms * 1e6)).toFixed(1)} GFLOP/s`
    : '';
  console.log(`${ms.toFixed(2).padStart(9)} ms ${String(count).padStart(3)}×  ${label}${rate}`);
}
process.exit(0);
