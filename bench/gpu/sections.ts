// The `npm run bench` sections the GPU bundle (bench/gpu/pack.sh, .gpu/bundle/gpuSections.mjs)
// runs in plain Node on a lent GPU, beside bench/webgpuRun.ts: the Llama family's, at
// Qwen2.5-Coder-0.5B's shape with random weights — `llama` (its kernels, then load, prefill and
// decode tokens/s) and `llama-lora` (a LoRA forward + backward); and `peers`, the lab's kernel
// rows of `npm run bench -- peers` (bench/peersLab.ts). Only these are bundled: the
// other sections need vite-node, a browser or the CPU's wasm. BENCH_SECTIONS (comma-separated,
// default all of these) chooses; each prints its table as `npm run bench` does, then how long
// it took, so the device call's time can be planned.
import { llamaBench } from '../llama';
import { llamaLoraBench } from '../llamaLora';
import { peersKernelsBench } from '../peersLab';
import { type BenchSection, formatTable } from '../table';

export const GPU_SECTIONS: Record<string, BenchSection> = {
  llama: llamaBench,
  'llama-lora': llamaLoraBench,
  peers: peersKernelsBench,
};

const known = Object.keys(GPU_SECTIONS);
const names = (process.env.BENCH_SECTIONS ?? known.join(',')).split(',').filter(Boolean);
const unknown = names.filter((name) => !known.includes(name));
if (unknown.length > 0) {
  console.error(
    `BENCH_SECTIONS: ${unknown.join(', ')} not in the GPU bundle (it has ${known.join(', ')})`,
  );
  process.exit(2);
}
let failed = false;
for (const name of names) {
  const start = performance.now();
  try {
    console.log(formatTable(await (GPU_SECTIONS[name] as BenchSection)()));
  } catch (error) {
    console.log(`## ${name}\n\nfailed: ${error instanceof Error ? error.message : String(error)}`);
    failed = true;
  }
  console.log(`\n(${name}: ${((performance.now() - start) / 1000).toFixed(1)} s)\n`);
}
// Dawn keeps the process alive otherwise.
process.exit(failed ? 1 : 0);
