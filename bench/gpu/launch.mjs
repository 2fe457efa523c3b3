// Starts the bundled bench (webgpuRun.mjs) in plain Node: navigator.gpu from Dawn's `webgpu`
// package carried in ./node_modules (under vite-node, src/gpu/nodeWebgpu.ts does this).
import * as webgpu from './node_modules/webgpu/index.js';

Object.assign(globalThis, webgpu.globals);
const gpu = webgpu.create([]);
globalThis.__gpu = gpu; // Dawn crashes at random if the gpu object is garbage-collected
Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
await import('./webgpuRun.mjs');
