// The kernels' self-check (src/gpu/engine/selfCheck/): every registered kernel passes on this
// adapter; a deliberately wrong matmul version (an off-by-one, WGSL text given through the
// test-only hook, nothing shipped in shaders/) is caught, dropped from the tuner's choices, and
// the run goes on with the right numbers; a wrong kernel the engine cannot do without turns
// the kernels off, the run going on on tfjs; a model too big for the adapter's limits is
// refused in words before anything is uploaded.

import { readFileSync } from 'node:fs';
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import { buildGpuReport } from '../../src/gpu/engine/gpuReport';
import { formatGpuReport } from '../../src/gpu/engine/gpuReportFormat';
import {
  disableKernelEngine,
  enableKernelEngine,
  engineFor,
  kernelEngine,
  kernelEngineReport,
} from '../../src/gpu/engine/kernelEngine';
import { sampleGptOnDevice } from '../../src/gpu/engine/kernelRoles';
import { limitsOf } from '../../src/gpu/engine/limits';
import { MATMUL_VERSIONS, SHADERS } from '../../src/gpu/engine/ops';
import { GpuRuntime } from '../../src/gpu/engine/runtime';
import {
  describeFailure,
  SELF_CHECK_SEED,
  START_SIZES,
  selfCheckAtStart,
} from '../../src/gpu/engine/selfCheck';
import { checksFor, headSizeChecks } from '../../src/gpu/engine/selfCheck/checksByConfig';
import { kernelChecks } from '../../src/gpu/engine/selfCheck/registry';
import { runCheck } from '../../src/gpu/engine/selfCheck/run';
import { setShaderOverridesForTest } from '../../src/gpu/engine/selfCheck/testHook';
import { openKernelDevice } from '../../src/gpu/kernels/device';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import { parseLlamaConfig } from '../../src/model/families/hfConfig';
import { llamaTransformerConfig } from '../../src/model/families/llamaConfig';
import type { GPT } from '../../src/model/gpt';
import { initialValues, makeVariables, parameterSpecs } from '../../src/model/params';
import { KvCacheSampler } from '../../src/rollout/kvSampler';
import { Rng } from '../../src/tasks/random';
import { fixtureSpec } from './hf-fixtures';

const MATMUL = readFileSync(new URL('../../shaders/matmul.wgsl', import.meta.url), 'utf8');

/** A version's K loop started one step (one vec4 for v4) late: an off-by-one the tests can see. */
function offByOne(source: string, entry: string): string {
  const start = source.indexOf(`fn ${entry}(`);
  const end = source.indexOf('\n}\n', start);
  const body = source.slice(start, end);
  const broken = body.replace(/var k = 0u; k < p\.K; k(\+\+| \+= 4u)/, (loop, step: string) =>
    loop.replace('var k = 0u', `var k = ${step === '++' ? '1u' : '4u'}`),
  );
  if (broken === body) throw new Error(`no K loop found in ${entry}`);
  return source.slice(0, start) + broken + source.slice(end);
}

/** The entry's first workgroupBarrier() removed: a tile read before every invocation has loaded it. */
function missingBarrier(source: string, entry: string): string {
  const start = source.indexOf(`fn ${entry}(`);
  const end = source.indexOf('\n}\n', start);
  const body = source.slice(start, end);
  const broken = body.replace('workgroupBarrier();', '// (barrier removed)');
  if (broken === body) throw new Error(`no barrier found in ${entry}`);
  return source.slice(0, start) + broken + source.slice(end);
}

let model: GPT;
beforeAll(async () => {
  await initBackend('cpu');
  const config = makeConfig('tiny', 31, 'shared', { nCtx: 40 });
  const values = initialValues(config, 9);
  const wte = values.get('transformer.wte.weight')!;
  for (let i = 0; i < wte.length; i++) wte[i] = (wte[i] ?? 0) * 30;
  model = { config, params: makeVariables(config, values) };
});
afterEach(() => setShaderOverridesForTest({}));
afterAll(() => disableKernelEngine());

describe('the kernels’ self-check', () => {
  it('every kernel and matmul version passes on this adapter, within its tolerance', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const rt = new GpuRuntime(opened.gpu.device);
    await rt.load([...SHADERS]);
    const t0 = performance.now();
    const check = await selfCheckAtStart(rt, opened.gpu.software);
    const ms = performance.now() - t0;
    const failed = check.results.filter((r) => !r.ok);
    expect(failed.map((r) => `${r.name}: ${r.error ?? r.ratio}`)).toEqual([]);
    expect(new Set(check.results.map((r) => r.name)).size).toBeGreaterThanOrEqual(10);
    expect(check.allowed).toEqual([...MATMUL_VERSIONS]);
    for (const r of check.results) expect(r.ratio).toBeLessThanOrEqual(1);
    // Compiling is measured apart: every check compiles something (a fresh runtime), within its time.
    for (const r of check.results) {
      expect(r.compileMs).toBeGreaterThanOrEqual(0);
      expect(r.compileMs!).toBeLessThanOrEqual(r.ms);
    }
    expect(check.results.reduce((s, r) => s + r.compileMs!, 0)).toBeGreaterThan(0);
    console.log(
      `self-check at start on ${opened.gpu.adapter}: ${check.results.length} checks in ${ms.toFixed(0)} ms (with the tuner)`,
    );
    console.log(
      check.results
        .map(
          (r) =>
            `${r.name} ${r.ms.toFixed(0)} ms (compiling ${r.compileMs!.toFixed(0)}) ratio ${r.ratio.toPrecision(2)}`,
        )
        .join('\n'),
    );
    rt.destroy();
  });
});

describe('a wrong kernel is never used', () => {
  const prng = new Rng(3);
  const prompts = [5, 9, 2, 9].map((n) => Array.from({ length: n }, () => 1 + prng.below(30)));
  const options = { maxNewTokens: 12, temperature: 0.8, topK: 0, seed: 17, stopId: 0xffff };

  it('a matmul version with an off-by-one is dropped from the tuner; the run samples what the host samples', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    // v4_vec4, the version the tuner picks on CPU drivers, skipping its first four k.
    setShaderOverridesForTest({ 'matmul.wgsl': offByOne(MATMUL, 'v4_vec4') });
    const on = await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(on.enabled).toBe(true);
    expect(on.selfCheck?.failed).toEqual(['matmul/v4_vec4', 'matmul/v4_vec4@run']);
    const engine = kernelEngine();
    expect(engine?.selfCheck.allowed).not.toContain('v4_vec4');
    expect(Object.keys(engine?.selfCheck.tuning.timings ?? {})).not.toContain('v4_vec4');
    expect(engine?.matmul).not.toBe('v4_vec4');
    const failure = engine?.selfCheck.results.find((r) => r.name === 'matmul/v4_vec4');
    expect(failure?.ratio).toBeGreaterThan(10); // far outside its tolerance, and said with numbers
    const host = await new KvCacheSampler(model).sample(prompts, options);
    const device = await sampleGptOnDevice(model, prompts, options);
    expect(device?.tokens).toEqual(host.tokens);
    // The GPU report names it, with its largest error against its tolerance.
    const report = buildGpuReport();
    expect(report?.selfCheck.failed).toEqual(['matmul/v4_vec4', 'matmul/v4_vec4@run']);
    expect(report?.matmul.allowed).not.toContain('v4_vec4');
    expect(formatGpuReport(report!)).toMatch(/\| matmul\/v4_vec4 \| start \| FAILED \|/);
    expect(Object.keys(report?.limits ?? {})).toContain('maxStorageBufferBindingSize');
    disableKernelEngine();
  });

  it('a tiled matmul missing its barrier fails its check with numbers; the real one passes', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const rt = new GpuRuntime(opened.gpu.device);
    await rt.load(['matmul.wgsl']);
    const check = kernelChecks().find((c) => c.name === 'matmul/v2_tiled')!;
    const options = {
      rt,
      sizes: START_SIZES,
      matmul: 'v1_regblock' as const,
      software: opened.gpu.software,
      seed: SELF_CHECK_SEED,
    };
    // A CPU driver runs a workgroup's invocations a few lanes at a time, each to the next
    // barrier: without it the first lanes read the tile before the later ones have stored it.
    rt.replaceSource('matmul.wgsl', missingBarrier(MATMUL, 'v2_tiled'));
    const broken = await runCheck(check, options);
    expect(broken.ok).toBe(false);
    expect(broken.ratio).toBeGreaterThan(10);
    expect(describeFailure(broken)).toMatch(/^matmul\/v2_tiled at start: c\d+\[\d+\] off by /);
    rt.replaceSource('matmul.wgsl', MATMUL);
    expect((await runCheck(check, options)).ok).toBe(true);
    rt.destroy();
  });

  it('a wrong kernel the engine cannot do without turns the kernels off: the run goes on on tfjs', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    // v1_regblock: the fallback of every shape v4 cannot take.
    setShaderOverridesForTest({ 'matmul.wgsl': offByOne(MATMUL, 'v1_regblock') });
    const report = await initBackend('kernels');
    expect(report.kernels).toBe(false);
    expect(report.selfCheck?.failed).toContain('matmul/v1_regblock');
    expect(report.reason).toMatch(
      /kernel self-check failed on .*swiftshader|kernel self-check failed on /i,
    );
    expect(report.reason).toMatch(
      /matmul\/v1_regblock at start: c\d+\[\d+\] off by [\d.e+-]+ against [\d.e+-]+ allowed/,
    );
    expect(kernelEngine()).toBeNull();
    const host = await new KvCacheSampler(model).sample(prompts, options);
    expect(await sampleGptOnDevice(model, prompts, options)).toBeNull(); // the caller samples on tfjs
    expect((await new KvCacheSampler(model).sample(prompts, options)).tokens).toEqual(host.tokens);
    await initBackend('cpu');
  });
});

describe('a config’s kernels are checked when a role of it first reaches the kernels', () => {
  const SWIGLU = readFileSync(new URL('../../shaders/swiglu.wgsl', import.meta.url), 'utf8');
  // The random Qwen2 of the tests (RMSNorm, RoPE, SwiGLU, 4 heads of 8 over 2 kv heads).
  const qwen2 = llamaTransformerConfig(parseLlamaConfig(fixtureSpec('qwen2').config));
  const gpt2 = gptTransformerConfig(makeConfig('tiny', 617));
  const names = (c: typeof qwen2 | null) => checksFor(c).map((check) => check.name);

  it('each check goes with the switches that need it', () => {
    expect(names(qwen2)).toEqual(
      expect.arrayContaining([
        'rmsnorm/forward+backward',
        'rope/forward+inverse',
        'swiglu/forward+backward',
        'lora/up+grads',
        'decode/fused layer (RMSNorm, RoPE, q/k norm, GQA, SwiGLU)',
        'attention/gqa (heads of 8)',
      ]),
    );
    expect(names(qwen2)).not.toContain('rmsnorm/per-head (q/k norm)');
    expect(names(qwen2)).not.toContain('gelu/forward+backward');
    expect(names({ ...qwen2, qkNorm: true })).toContain('rmsnorm/per-head (q/k norm)');
    // GPT-2 under an adapter: GELU on its own, LoRA's and 16-bit weights' kernels, none of
    // RMSNorm, RoPE, SwiGLU (nor the fused layer with them: the start checks GPT-2's).
    expect(names(gpt2)).toEqual(expect.arrayContaining(['gelu/forward+backward', 'lora/up+grads']));
    for (const name of names(gpt2)) expect(name).not.toMatch(/rmsnorm|rope|swiglu|fused/);
    // Every switch's, for the GPU report; none registered at the start.
    for (const check of checksFor(null)) expect(kernelChecks()).not.toContain(check);
    expect(names(null)).toEqual(
      expect.arrayContaining([...names(qwen2).slice(0, -3), ...names(gpt2)]),
    );
  });

  it("not at a GPT-2 run's start; once per engine, before a config's first call; all pass", async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const on = await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(on.enabled).toBe(true);
    const atStart = kernelEngine()!.selfCheck.results.map((r) => r.name);
    for (const name of names(null)) expect(atStart).not.toContain(name);
    expect(await engineFor(qwen2)).toBe(kernelEngine());
    const after = [...kernelEngine()!.selfCheck.results];
    expect(after.slice(atStart.length).map((r) => r.name)).toEqual(names(qwen2));
    expect(after.filter((r) => !r.ok)).toEqual([]);
    // The tally the backend line and the start event show counts them.
    expect(kernelEngineReport().selfCheck?.checks).toBe(atStart.length + names(qwen2).length);
    // Once per engine: a second call does not run them again.
    await Promise.all([engineFor(qwen2), engineFor(qwen2)]);
    expect(kernelEngine()!.selfCheck.results.length).toBe(after.length);
    // Another config runs only what it needs that has not run: GPT-2's GELU on its own.
    expect(await engineFor(gpt2)).toBe(kernelEngine());
    const added = kernelEngine()!
      .selfCheck.results.slice(after.length)
      .map((r) => r.name);
    expect(added).toEqual(names(gpt2).filter((name) => !names(qwen2).includes(name)));
    expect(added).toContain('gelu/forward+backward');
    disableKernelEngine();
  });

  it('a head size of a model’s own (Qwen3’s 128) is checked when such a model first reaches the kernels, once', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(headSizeChecks(16)).toEqual([]); // the fixed checks' sizes
    expect(headSizeChecks(64)).toEqual([]);
    const at128 = headSizeChecks(128).map((c) => c.name);
    expect(at128).toEqual([
      'attention/gqa (heads of 128)',
      'attention/gqa (packed rows: shared prompts) (heads of 128)',
      'attention/gqa_decode (heads of 128)',
    ]);
    const qwen3 = { ...qwen2, headDim: 128, qkNorm: true };
    expect(names(qwen3).slice(-3)).toEqual(at128);
    expect(await engineFor(qwen3)).toBe(kernelEngine());
    const results = [...kernelEngine()!.selfCheck.results];
    expect(results.filter((r) => at128.includes(r.name)).map((r) => r.ok)).toEqual([
      true,
      true,
      true,
    ]);
    await engineFor(qwen3);
    expect(kernelEngine()!.selfCheck.results.length).toBe(results.length);
    disableKernelEngine();
  });

  it('a wrong kernel of a config turns the kernels off before its base reaches them, said with numbers', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    // SiLU's sigmoid off by a factor: SwiGLU's forward and backward both go wrong.
    const wrong = SWIGLU.replace('1.0 / (1.0 + exp(-g))', '1.01 / (1.0 + exp(-g))');
    expect(wrong).not.toBe(SWIGLU);
    setShaderOverridesForTest({ 'swiglu.wgsl': wrong });
    const on = await enableKernelEngine({ device: opened.gpu, allowSoftware: true });
    expect(on.enabled).toBe(true); // a GPT-2 run does not run SwiGLU
    expect(await engineFor(gpt2)).toBe(kernelEngine()); // nor does GPT-2 under an adapter
    expect(await engineFor(qwen2)).toBeNull();
    expect(kernelEngine()).toBeNull();
    const off = kernelEngineReport();
    expect(off.enabled).toBe(false);
    expect(off.selfCheck?.failed).toEqual(['swiglu/forward+backward']);
    expect(off.reason).toMatch(
      /swiglu\/forward\+backward at fixed sizes: \w+\[\d+\] off by [\d.e+-]+ against [\d.e+-]+ allowed.*the run continues on the tfjs backend/,
    );
  });
});

describe('limits planned, not discovered', () => {
  it('a model the adapter cannot hold is refused in words before any buffer is made', async (ctx) => {
    const opened = await openKernelDevice();
    if (!opened.ok) return ctx.skip(`no WebGPU adapter: ${opened.why}`);
    const rt = new GpuRuntime(opened.gpu.device);
    expect(Object.keys(limitsOf(opened.gpu.device))).toContain('maxStorageBufferBindingSize');
    // Training every weight holds them in one binding: a binding of 64 KiB is too little for
    // the tiny preset's weights (its embedding alone is 154 KiB).
    const config = makeConfig('tiny', 617);
    const values = initialValues(config, 1);
    const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
    const weights = float32Tensors(values, (name) => shapes.get(name));
    const before = rt.bufferCount;
    expect(
      () =>
        new DeviceTransformer(rt, gptTransformerConfig(config), weights, {
          trainable: true,
          maxBindingBytes: 64 * 1024,
        }),
    ).toThrow(
      /^the model needs more than [\d.]+ MiB for its weights in one buffer .*; this adapter allows [\d.]+ MiB \(\d+ bytes\): choose a smaller preset \(width, layers\) or vocabulary, or train a LoRA adapter$/,
    );
    expect(rt.bufferCount).toBe(before); // nothing made, nothing uploaded
    // Frozen (sampling, a LoRA base), the same model runs in row ranges of the binding.
    const frozen = new DeviceTransformer(rt, gptTransformerConfig(config), weights, {
      maxBindingBytes: 64 * 1024,
    });
    expect(frozen.embed.parts.length).toBeGreaterThan(1);
    rt.destroy();
  });
});
