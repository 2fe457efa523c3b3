// Starts one of the bundle's entries in plain Node (default webgpuRun.mjs; `launch.mjs
// gpuSections.mjs` for the Llama-family sections): navigator.gpu from Dawn's `webgpu` package
// carried in ./node_modules (under vite-node, src/gpu/nodeWebgpu.ts does this).
import * as webgpu from './node_modules/webgpu/index.js';

const entry = process.argv[2] ?? 'webgpuRun.mjs';
if (!/^[\w-]+\.mjs$/.test(entry))
  throw new Error(`launch.mjs: ${entry} is not an entry of the bundle`);
Object.assign(globalThis, webgpu.globals);
const gpu = webgpu.create([]);
globalThis.__gpu = gpu; // Dawn crashes at random if the gpu object is garbage-collected
Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
await import(`./${entry}`);
