// Every version of every custom WGSL kernel against its float64 TypeScript reference, on
// fresh seeded inputs. Runs on Dawn in Node; on a CPU-only machine over SwiftShader.
import { beforeAll, describe, expect, it } from 'vitest';
import { getKernelDevice } from '../../src/gpu/kernels/device';
import {
  GRPO_TOKEN_LOSS_VERSIONS,
  type GrpoTokenBuffers,
  grpoTokenLoss,
} from '../../src/gpu/kernels/grpoTokenLoss';
import {
  type GrpoTokenOptions,
  grpoTokenLossReference,
  tokenLogprobReference,
} from '../../src/gpu/kernels/reference';
import { TOKEN_LOGPROB_VERSIONS, tokenLogprob } from '../../src/gpu/kernels/tokenLogprob';
import { grpoLossReference } from '../../src/rl/grpoLossReference';
import { Rng } from '../../src/tasks/random';

let device: GPUDevice | null = null;
let missing = '';

beforeAll(async () => {
  const result = await getKernelDevice();
  if (result.ok) device = result.gpu.device;
  else missing = result.why;
});

/** |gpu − ref| ≤ 1e-4·|ref| + atol, element by element; reports the worst element. */
function expectClose(gpu: ArrayLike<number>, ref: ArrayLike<number>, atol = 1e-5) {
  expect(gpu.length).toBe(ref.length);
  let worst = { i: -1, excess: 0 };
  for (let i = 0; i < ref.length; i++) {
    const g = gpu[i] ?? Number.NaN;
    const r = ref[i] ?? Number.NaN;
    const excess = Math.abs(g - r) - (1e-4 * Math.abs(r) + atol);
    if (!(excess <= 0) && (worst.i < 0 || !(excess <= worst.excess))) worst = { i, excess };
  }
  if (worst.i >= 0)
    expect.fail(`element ${worst.i}: gpu ${gpu[worst.i]} vs reference ${ref[worst.i]}`);
}

function needDevice(ctx: { skip: (note?: string) => void }): GPUDevice {
  if (!device) ctx.skip(`no WebGPU adapter: ${missing}`);
  return device as GPUDevice;
}

// [rows, vocab, logit scale]: V off the workgroup size of 64, R = 1, V = 1, ±50 logits.
const LOGPROB_SHAPES: [number, number, number][] = [
  [1, 105, 3],
  [7, 1, 3],
  [33, 105, 3],
  [64, 64, 3],
  [130, 257, 3],
  [5, 1000, 3],
  [40, 105, 50],
  [3, 70, 50],
];

describe('token_logprob (fused log-softmax + pick, entropy)', () => {
  for (const version of TOKEN_LOGPROB_VERSIONS) {
    it(`${version} matches the reference on every shape`, async (ctx) => {
      const gpu = needDevice(ctx);
      let seed = 1;
      for (const [rows, vocab, scale] of LOGPROB_SHAPES) {
        const prng = new Rng(seed++ * 7919);
        const logits = Float32Array.from(
          { length: rows * vocab },
          () => (2 * prng.next() - 1) * scale,
        );
        const targets = Uint32Array.from({ length: rows }, () => prng.below(vocab));
        const ref = tokenLogprobReference(logits, targets, rows, vocab);
        const out = await tokenLogprob(gpu, version, logits, targets, rows, vocab);
        expectClose(out.logp, ref.logp);
        expectClose(out.entropy, ref.entropy);
      }
    });
  }

  it('rejects a target outside the vocabulary', async (ctx) => {
    const gpu = needDevice(ctx);
    await expect(
      tokenLogprob(gpu, 'v1_thread_per_row', new Float32Array(4), new Uint32Array([4]), 1, 4),
    ).rejects.toThrow(/target 4/);
  });
});

/** Tokens whose ratios fall inside and outside the clip range, both advantage signs, padding. */
function grpoInputs(n: number, seed: number): GrpoTokenBuffers {
  const prng = new Rng(seed);
  const logp = Float32Array.from({ length: n }, () => -4 * prng.next());
  // log ρ spread over ±0.6 puts many tokens outside [1 − 0.2, 1 + 0.28].
  const oldLogp = logp.map((lp) => lp - (2 * prng.next() - 1) * 0.6);
  // Mostly small Δ (the k3 series branch), some large.
  const refLogp = logp.map((lp) => lp + (2 * prng.next() - 1) * (prng.next() < 0.5 ? 0.05 : 1.5));
  const advantage = Float32Array.from({ length: n }, () => (2 * prng.next() - 1) * 2);
  // Mostly 1, some padding (0), a few fractional weights so the multiply is checked too.
  const mask = Float32Array.from({ length: n }, () => {
    const u = prng.next();
    return u < 0.75 ? 1 : u < 0.8 ? 0.5 : 0;
  });
  // Padding with garbage log-probs must still give exactly 0.
  for (let i = 0; i < n; i++) if (mask[i] === 0 && i % 3 === 0) logp[i] = Number.NaN;
  return { logp, oldLogp, refLogp, advantage, mask };
}

const OPTIONS: GrpoTokenOptions[] = [
  { epsilonLow: 0.2, epsilonHigh: 0.28, beta: 0.04 },
  { epsilonLow: 0.2, epsilonHigh: 0.2, beta: 0 },
];

describe('grpo_token_loss (fused per-token GRPO loss)', () => {
  it('the kernel reference equals grpoLossReference perTokenLoss × mask', () => {
    const G = 4;
    const L = 9;
    const flat = grpoInputs(G * L, 5);
    flat.logp.forEach((v, i) => {
      if (Number.isNaN(v)) flat.logp[i] = -1; // grpoLossReference does not mask before aggregating
    });
    const rows = (values: Float32Array) =>
      Array.from({ length: G }, (_, g) => Array.from(values.subarray(g * L, (g + 1) * L)));
    const perOutputAdvantage = Array.from({ length: G }, (_, g) => Math.fround((g - 1.5) * 0.7));
    const advantage = Float32Array.from(
      { length: G * L },
      (_, i) => perOutputAdvantage[Math.floor(i / L)] ?? 0,
    );
    for (const options of OPTIONS) {
      const full = grpoLossReference(
        {
          logProbs: rows(flat.logp),
          oldLogProbs: rows(flat.oldLogp),
          refLogProbs: rows(flat.refLogp),
          advantages: perOutputAdvantage,
          mask: rows(flat.mask),
        },
        { ...options, lossType: 'dapo' },
      );
      const expected = full.perTokenLoss.flat().map((l, i) => l * (flat.mask[i] ?? 0));
      const mine = grpoTokenLossReference({ ...flat, advantage }, options);
      for (let i = 0; i < expected.length; i++) expect(mine[i]).toBeCloseTo(expected[i] ?? 0, 12);
      expect(full.metrics.clipRatioRegion).toBeGreaterThan(0); // the clip branch was exercised
    }
  });

  for (const version of GRPO_TOKEN_LOSS_VERSIONS) {
    it(`${version} matches the reference`, async (ctx) => {
      const gpu = needDevice(ctx);
      let seed = 100;
      for (const n of [1, 63, 64, 257, 12288 + 5]) {
        for (const options of OPTIONS) {
          const inputs = grpoInputs(n, seed++);
          const ref = grpoTokenLossReference(inputs, options);
          expectClose(await grpoTokenLoss(gpu, version, inputs, options), ref);
        }
      }
    });
  }

  // k3 alone (Â = 0, β = 1) near the reference policy: f32 exp(Δ) − Δ − 1 would lose most
  // digits here; the kernel's series branch must keep ~1e-4 relative.
  for (const version of GRPO_TOKEN_LOSS_VERSIONS) {
    it(`${version} keeps k3 precise for small Δ`, async (ctx) => {
      const gpu = needDevice(ctx);
      const n = 200;
      const logp = Float32Array.from({ length: n }, (_, i) => -1 - i / n);
      const refLogp = logp.map((lp, i) => lp + (i - n / 2) * 2e-4);
      const inputs = {
        logp,
        oldLogp: logp.slice(),
        refLogp,
        advantage: new Float32Array(n),
        mask: new Float32Array(n).fill(1),
      };
      const options = { epsilonLow: 0.2, epsilonHigh: 0.2, beta: 1 };
      const ref = grpoTokenLossReference(inputs, options);
      expectClose(await grpoTokenLoss(gpu, version, inputs, options), ref, 1e-10);
    });
  }
});
