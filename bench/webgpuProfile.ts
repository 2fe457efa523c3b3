// Where a device training step's time goes: each dispatch of the forward and backward of one
// full-parameter GRPO step on the kernels' one model (a trainable DeviceTransformer and its
// policy, gpu/engine/devicePolicy.ts) replayed alone and timed, summed by kernel. A tool for
// tuning the kernels, not a benchmark table: `npx vite-node bench/webgpuProfile.ts`
// (BENCH_PRESETS=small, and VK_ICD_FILENAMES for lavapipe as TESTING.md sets it up).

import { float32Tensors } from '../src/gpu/engine/deviceCheckpoint';
import { DevicePolicy } from '../src/gpu/engine/devicePolicy';
import { DeviceTransformer } from '../src/gpu/engine/deviceTransformer';
import { type MatmulVersion, SHADERS } from '../src/gpu/engine/ops';
import { GpuRuntime } from '../src/gpu/engine/runtime';
import { tuneMatmul } from '../src/gpu/engine/tune';
import { getKernelDevice } from '../src/gpu/kernels/device';
import { gptTransformerConfig, makeConfig, type PresetName } from '../src/model/config';
import { initialValues, parameterSpecs } from '../src/model/params';
import { Rng } from '../src/tasks/random';

const PRESET = (process.env.BENCH_PRESETS ?? 'small').split(',')[0] as PresetName;
const B = Number(process.env.BENCH_TRAIN_B ?? 8);
const T = Number(process.env.BENCH_TRAIN_T ?? 96);
const REPEAT = 5;

const opened = await getKernelDevice();
if (!opened.ok) throw new Error(opened.why);
const rt = new GpuRuntime(opened.gpu.device);
await rt.load([...SHADERS]);
const config = makeConfig(PRESET, 617, 'coder', { nCtx: Math.max(T, 64) });
const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
const matmul = (process.env.MATMUL as MatmulVersion | undefined) ?? (await tuneMatmul(rt));
const model = new DeviceTransformer(
  rt,
  gptTransformerConfig(config),
  float32Tensors(initialValues(config, 1), (name) => shapes.get(name)),
  { contextLength: config.nCtx, trainable: true, matmul },
);
const policy = new DevicePolicy(rt, model, 'weights');
const prng = new Rng(2);
const sequences = Array.from({ length: B }, () => Array.from({ length: T }, () => prng.below(617)));
// The completion: the last two thirds of each row, as a GRPO step scores it.
const batch = { sequences, scoredFrom: sequences.map(() => Math.floor(T / 3)), temperature: 0.7 };
const dlogp = sequences.map(() =>
  Float32Array.from({ length: T - 1 }, (_, t) => (t >= T / 3 ? prng.normal() / (B * T) : 0)),
);
const loss = () => ({ loss: 1, dlogp });
const adam = { lr: 1e-4, maxGradNorm: 1 };
await policy.step(batch, loss, adam); // compile
let start = performance.now();
await policy.step(batch, loss, adam);
const whole = performance.now() - start;

const byLabel = new Map<string, { ms: number; count: number }>();
let total = 0;
for (const part of policy.trainingParts(batch, dlogp)) {
  if (typeof part === 'function') continue; // a copy or a clear between dispatches
  for (const d of part) {
    const one = rt.program([d]);
    rt.submit([one]);
    await rt.device.queue.onSubmittedWorkDone();
    start = performance.now();
    rt.submit([one], REPEAT);
    await rt.device.queue.onSubmittedWorkDone();
    const ms = (performance.now() - start) / REPEAT;
    rt.destroyProgram(one);
    total += ms;
    const label = d.label ?? d.entry;
    const entry = byLabel.get(label) ?? { ms: 0, count: 0 };
    entry.ms += ms;
    entry.count++;
    byLabel.set(label, entry);
  }
}
console.log(
  `${opened.gpu.adapter}\n${PRESET}, ${B}×${T}, matmul ${matmul}: whole step ${whole.toFixed(1)} ms (with the host's loss and AdamW), forward + backward dispatches alone ${total.toFixed(1)} ms`,
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
