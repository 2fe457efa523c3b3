// shaders/decode_layer.wgsl: a decode step's layer in one dispatch (a trainable model's flat f32
// weights) against the same model decoding layer by layer, prefill then decode steps, logits
// within float rounding: GPT-2's switches (LayerNorm with bias, GELU, Conv1D weights, heads of
// 16 and of 64) and the others it takes (RMSNorm, SwiGLU, grouped-query attention, a q|k|v bias,
// an untied head, nn.Linear weights; RoPE as Llama and Qwen2, with Qwen3's q/k norm), at 16 and
// 64 invocations per workgroup.
import { describe, expect, it } from 'vitest';
import { float32Tensors } from '../../src/gpu/engine/deviceCheckpoint';
import { DeviceTransformer } from '../../src/gpu/engine/deviceTransformer';
import { gptTransformerConfig, makeConfig } from '../../src/model/config';
import { initialValues, parameterSpecs } from '../../src/model/params';
import type { TransformerConfig } from '../../src/model/transformerConfig';
import { Rng } from '../../src/tasks/random';
import { kernelRuntime, needRuntime } from './kernels-harness';
import { relativeToLargest } from './llama-device-fixtures';

const h = kernelRuntime();

/** A config of the switches GPT-2 does not use, with learned positions. */
const OTHER: TransformerConfig = {
  vocabSize: 53,
  hidden: 48,
  layers: 2,
  heads: 6,
  kvHeads: 2,
  headDim: 8,
  intermediate: 40,
  contextLength: 32,
  norm: 'rmsnorm',
  normEps: 1e-6,
  positions: 'learned',
  mlp: 'swiglu',
  fusedQkv: false,
  weightLayout: 'out-in',
  qkvBias: true,
  projBias: false,
  qkNorm: false,
  tiedHead: false,
  names: {
    embed: 'e.weight',
    positions: 'p.weight',
    head: 'h.weight',
    finalNorm: 'n',
    layer: (i) => `l${i}`,
    inNorm: 'n1',
    postNorm: 'n2',
    q: 'q',
    k: 'k',
    v: 'v',
    o: 'o',
    gate: 'g',
    up: 'u',
    down: 'd',
  },
};

function withoutPositions(names: TransformerConfig['names']): TransformerConfig['names'] {
  const { positions: _, ...rest } = names;
  return rest;
}

/** The Llama family's switches: RoPE (scaled, as Llama 3's) and Qwen3's q/k norm. */
const ROPE: TransformerConfig = {
  ...OTHER,
  headDim: 16,
  heads: 4,
  positions: 'rope',
  rope: { theta: 10000, scaling: { type: 'linear', factor: 2 } },
  qkNorm: true,
  names: { ...withoutPositions(OTHER.names), qNorm: 'qn', kNorm: 'kn' },
};
const QWEN2: TransformerConfig = { ...ROPE, qkNorm: false };

function otherWeights(c: TransformerConfig, seed: number) {
  const rng = new Rng(seed);
  const { hidden: D, intermediate: I, heads: H, kvHeads: kvH, headDim: hd } = c;
  const shapes = new Map<string, number[]>([
    ['e.weight', [c.vocabSize, D]],
    ['p.weight', [c.contextLength, D]],
    ['h.weight', [c.vocabSize, D]],
    ['n.weight', [D]],
  ]);
  for (let l = 0; l < c.layers; l++)
    for (const [name, shape] of [
      ['n1.weight', [D]],
      ['n2.weight', [D]],
      ['q.weight', [H * hd, D]],
      ['q.bias', [H * hd]],
      ['k.weight', [kvH * hd, D]],
      ['k.bias', [kvH * hd]],
      ['v.weight', [kvH * hd, D]],
      ['v.bias', [kvH * hd]],
      ['o.weight', [D, H * hd]],
      ['g.weight', [I, D]],
      ['u.weight', [I, D]],
      ['d.weight', [D, I]],
    ] as [string, number[]][])
      shapes.set(`l${l}.${name}`, shape);
  for (let l = 0; l < c.layers && c.qkNorm; l++) {
    shapes.set(`l${l}.qn.weight`, [hd]);
    shapes.set(`l${l}.kn.weight`, [hd]);
  }
  if (c.positions === 'rope') shapes.delete('p.weight');
  const values = new Map(
    [...shapes].map(([name, shape]) => [
      name,
      Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () =>
        /(^n|n[12]|qn|kn)\.weight$/.test(name.replace(/^l\d+\./, ''))
          ? 1 + (rng.next() - 0.5) * 0.2
          : (rng.next() - 0.5) * 0.6,
      ),
    ]),
  );
  return float32Tensors(values, (name) => shapes.get(name));
}

function gptWeights(config: ReturnType<typeof makeConfig>, seed: number) {
  const shapes = new Map(parameterSpecs(config).map((p) => [p.name, p.shape]));
  return float32Tensors(initialValues(config, seed), (name) => shapes.get(name));
}

describe('a decode layer in one dispatch', () => {
  const cases: [string, TransformerConfig, () => ReturnType<typeof otherWeights>][] = [
    [
      'GPT-2, heads of 16',
      gptTransformerConfig(makeConfig('tiny', 61, 'coder', { nCtx: 32 })),
      () => gptWeights(makeConfig('tiny', 61, 'coder', { nCtx: 32 }), 3),
    ],
    [
      'GPT-2, heads of 64',
      gptTransformerConfig(makeConfig('tiny', 61, 'coder', { nEmbd: 128, nHead: 2, nCtx: 32 })),
      () => gptWeights(makeConfig('tiny', 61, 'coder', { nEmbd: 128, nHead: 2, nCtx: 32 }), 4),
    ],
    [
      'RMSNorm, SwiGLU, 6 heads over 2 k/v heads, q|k|v bias, untied head',
      OTHER,
      () => otherWeights(OTHER, 5),
    ],
    ['RoPE (linear scaling), heads of 16, as Qwen2', QWEN2, () => otherWeights(QWEN2, 6)],
    ['RoPE and q/k norm, as Qwen3', ROPE, () => otherWeights(ROPE, 7)],
  ];
  for (const [label, config, weights] of cases)
    for (const threads of [16, 64])
      it(`${label}, ${threads} invocations per workgroup of four rows: prefill and decode steps give the layer-by-layer logits`, async (ctx) => {
        const rt = needRuntime(h, ctx);
        const make = (decodeThreads: number) =>
          new DeviceTransformer(rt, config, weights(), {
            contextLength: 32,
            trainable: true,
            decodeThreads,
          });
        const fused = make(threads);
        const apart = make(0);
        const ids = [3, 17, 42, 8, 50, 1, 29, 33];
        expect(await fused.prefill(ids.slice(0, 3))).toEqual(await apart.prefill(ids.slice(0, 3)));
        let differs = false;
        for (let t = 3; t < ids.length; t++) {
          const got = await fused.step(ids[t] as number);
          const want = await apart.step(ids[t] as number);
          expect(relativeToLargest(got, want), `position ${t}`).toBeLessThan(1e-5);
          differs ||= got.some((v, i) => v !== want[i]);
        }
        // Another summation order: the fused kernel ran, not the layer-by-layer path twice.
        expect(differs).toBe(true);
      });
});
