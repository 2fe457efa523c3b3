import { matmul, SHADERS } from '../src/gpu/engine/ops';
import { loraGradB, loraGradU, loraUp } from '../src/gpu/engine/opsLora';
import { GpuRuntime, type DispatchSpec } from '../src/gpu/engine/runtime';
import { getKernelDevice } from '../src/gpu/kernels/device';
const opened = await getKernelDevice();
if (!opened.ok) throw new Error(opened.why);
const rt = new GpuRuntime(opened.gpu.device);
await rt.load?.(SHADERS as never);
const M = 1080, N = 32, r = 8;
const big = (n: number) => { const b = rt.buffer(n); rt.write(b, Float32Array.from({ length: n }, () => Math.random())); return b; };
const a = big(M * 64), b = big(64 * 64), c = big(M * 64), du = big(M * r);
async function time(name: string, spec: DispatchSpec) {
  const p = rt.program([spec]);
  rt.submit([p]); await rt.device.queue.onSubmittedWorkDone();
  const t0 = performance.now();
  for (let i = 0; i < 10; i++) { rt.submit([p]); await rt.device.queue.onSubmittedWorkDone(); }
  console.log(name.padEnd(40), ((performance.now() - t0) / 10).toFixed(2), 'ms');
}
const dummy = rt.dummy;
for (const version of ['v1_regblock', 'v3_colblock', 'v4_vec4'] as const) {
  await time(`dx ${version}`, matmul({ M, N, K: r, a: du, b, c, flags: 4, version, dummy }));
  await time(`down ${version}`, matmul({ M, N: r, K: N, a, b, bStride: [1, N], c: du, version, dummy }));
  await time(`dA ${version}`, matmul({ M: r, N, K: M, a: du, aStride: [1, r], b: a, c, flags: 4, version, dummy }));
}
const cols = { M, N, r, scale: 2, rowStride: 96, offset: 32 };
await time('up', loraUp(cols, du, b, c));
await time('grad_u', loraGradU(cols, c, b, du));
await time('grad_b', loraGradB(cols, c, du, b, true));
await time('empty-ish up M=1', loraUp({ ...cols, M: 1 }, du, b, c));
process.exit(0);
