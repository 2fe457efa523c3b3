// The lab's GPT forward in plain float64 TypeScript, from referenceOps' pieces: the reference
// the self-check's decode check compares the device sampler's log-probs with.
import type { ModelConfig } from '../../../model/config';
import {
  attentionRef,
  embeddingRef,
  geluRef,
  layerNormRef,
  matmulRef,
} from '../../kernels/referenceOps';

type Values = Map<string, Float32Array>;

/** log softmax of the logits after the last token of `ids` (one sequence). */
export function nextTokenLogProbsRef(config: ModelConfig, values: Values, ids: number[]) {
  const { nEmbd: D, nHead: H, nLayer: L, nInner: F, vocabSize: V, layerNormEps: eps } = config;
  const T = ids.length;
  const w = (name: string) => values.get(name) as Float32Array;
  const h = (l: number, name: string) => w(`transformer.h.${l}.${name}`);
  let x: Float64Array = embeddingRef(
    ids,
    w('transformer.wte.weight'),
    w('transformer.wpe.weight'),
    1,
    T,
    D,
  );
  for (let l = 0; l < L; l++) {
    const a = layerNormRef(x, h(l, 'ln_1.weight'), h(l, 'ln_1.bias'), T, D, eps).y;
    const qkv = matmulRef(a, h(l, 'attn.c_attn.weight'), T, 3 * D, D, {
      bias: h(l, 'attn.c_attn.bias'),
    });
    const y = attentionRef(qkv, 1, T, H, D / H).y;
    const xm = matmulRef(y, h(l, 'attn.c_proj.weight'), T, D, D, {
      bias: h(l, 'attn.c_proj.bias'),
      residual: x,
    });
    const m = layerNormRef(xm, h(l, 'ln_2.weight'), h(l, 'ln_2.bias'), T, D, eps).y;
    const act = matmulRef(m, h(l, 'mlp.c_fc.weight'), T, F, D, { bias: h(l, 'mlp.c_fc.bias') }).map(
      geluRef,
    );
    x = matmulRef(act, h(l, 'mlp.c_proj.weight'), T, D, F, {
      bias: h(l, 'mlp.c_proj.bias'),
      residual: xm,
    });
  }
  const last = x.subarray((T - 1) * D, T * D);
  const xf = layerNormRef(
    last,
    w('transformer.ln_f.weight'),
    w('transformer.ln_f.bias'),
    1,
    D,
    eps,
  ).y;
  const wte = w('transformer.wte.weight');
  const logits = new Float64Array(V);
  for (let v = 0; v < V; v++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += (xf[j] ?? 0) * (wte[v * D + j] ?? 0);
    logits[v] = s;
  }
  let max = Number.NEGATIVE_INFINITY;
  for (const z of logits) max = Math.max(max, z);
  let sum = 0;
  for (const z of logits) sum += Math.exp(z - max);
  const lse = max + Math.log(sum);
  return logits.map((z) => z - lse);
}
