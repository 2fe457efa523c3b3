// GPT-2's forward in float64, from the tensors of a GGUF file as llama.cpp names and lays them
// out (a matrix of dims [in, out] is `out` rows of `in` values): learned positions, pre-LayerNorm,
// fused q|k|v, causal attention, GELU (tanh form) MLP, the head. `gelu: 'ggml-f16'` computes GELU
// as ggml's CPU backend does (GGML_GELU_FP16: the input rounded to half, the answer read from a
// table of halves), which is what sets llama.cpp's numbers apart from the lab's on GPT-2.
import { f16ToF32, f32ToF16 } from '../../src/model/safetensors';
import type { GgufRead } from './gguf-reader';

const SQRT_2_OVER_PI = 0.7978845608028654;
const COEF_A = 0.044715;

function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * x * (1 + COEF_A * x * x)));
}

function geluGgmlF16(x: number): number {
  if (x <= -10) return 0;
  if (x >= 10) return x;
  return f16ToF32(f32ToF16(geluTanh(f16ToF32(f32ToF16(x)))));
}

export function gpt2LastLogProbs(
  gguf: GgufRead,
  ids: readonly number[],
  gelu: 'exact' | 'ggml-f16',
): Float64Array {
  const m = gguf.metadata;
  const d = Number(m.get('gpt2.embedding_length'));
  const layers = Number(m.get('gpt2.block_count'));
  const heads = Number(m.get('gpt2.attention.head_count'));
  const eps = Number(m.get('gpt2.attention.layer_norm_epsilon'));
  const t = (name: string) => {
    const x = gguf.tensors.get(name);
    if (!x) throw new Error(`no ${name}`);
    return x.values;
  };
  const act = gelu === 'exact' ? geluTanh : geluGgmlF16;
  const T = ids.length;
  const hd = d / heads;
  const linear = (x: Float64Array, w: Float32Array, b: Float32Array | null, out: number) => {
    const inn = x.length;
    const y = new Float64Array(out);
    for (let o = 0; o < out; o++) {
      let s = b ? b[o]! : 0;
      for (let i = 0; i < inn; i++) s += w[o * inn + i]! * x[i]!;
      y[o] = s;
    }
    return y;
  };
  const norm = (x: Float64Array, w: Float32Array, b: Float32Array) => {
    const mean = x.reduce((a, v) => a + v, 0) / x.length;
    const variance = x.reduce((a, v) => a + (v - mean) ** 2, 0) / x.length;
    const r = 1 / Math.sqrt(variance + eps);
    return x.map((v, i) => (v - mean) * r * w[i]! + b[i]!);
  };
  const wte = t('token_embd.weight');
  const wpe = t('position_embd.weight');
  let h = ids.map((id, p) =>
    Float64Array.from({ length: d }, (_, i) => wte[id * d + i]! + wpe[p * d + i]!),
  );
  for (let l = 0; l < layers; l++) {
    const n = (s: string) => t(`blk.${l}.${s}`);
    const qkv = h.map((x) =>
      linear(
        norm(x, n('attn_norm.weight'), n('attn_norm.bias')),
        n('attn_qkv.weight'),
        n('attn_qkv.bias'),
        3 * d,
      ),
    );
    const attn = h.map((_, p) => {
      const out = new Float64Array(d);
      for (let hh = 0; hh < heads; hh++) {
        const scores = Array.from({ length: p + 1 }, (_, s) => {
          let dot = 0;
          for (let i = 0; i < hd; i++) dot += qkv[p]![hh * hd + i]! * qkv[s]![d + hh * hd + i]!;
          return dot / Math.sqrt(hd);
        });
        const max = Math.max(...scores);
        const e = scores.map((s) => Math.exp(s - max));
        const sum = e.reduce((a, v) => a + v, 0);
        for (let s = 0; s <= p; s++)
          for (let i = 0; i < hd; i++)
            out[hh * hd + i]! += (e[s]! / sum) * qkv[s]![2 * d + hh * hd + i]!;
      }
      return out;
    });
    h = h.map((x, p) => {
      const a = linear(attn[p]!, n('attn_output.weight'), n('attn_output.bias'), d);
      const r = x.map((v, i) => v + a[i]!);
      const f = n('ffn_up.bias').length;
      const up = linear(
        norm(r, n('ffn_norm.weight'), n('ffn_norm.bias')),
        n('ffn_up.weight'),
        n('ffn_up.bias'),
        f,
      );
      const down = linear(up.map(act), n('ffn_down.weight'), n('ffn_down.bias'), d);
      return r.map((v, i) => v + down[i]!);
    });
  }
  const last = norm(h[T - 1]!, t('output_norm.weight'), t('output_norm.bias'));
  const out = t('output.weight');
  const logits = linear(last, out, null, out.length / d);
  const max = Math.max(...logits);
  const log = Math.log(logits.reduce((a, v) => a + Math.exp(v - max), 0)) + max;
  return logits.map((v) => v - log);
}
