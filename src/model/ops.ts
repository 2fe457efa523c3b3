// Building blocks with hand-written gradients where tfjs is slow (TESTING.md, pitfalls
// 4–6): matMul's own gradient uses transposeA/B (slow on wasm), batched matMul is slow
// at every size, and slicing is slow, so attention loops 2D matMuls over batch×heads,
// taking its slices with `rows` (copies in JS on the CPU backends; `npm run bench -- tfjs-ops`).
import * as tf from '@tensorflow/tfjs-core';
import { fewRowsApplies, fewRowsLinear, rowBlock } from './fewRowsLinear';

/** x [n,k] @ w [k,m] with a gradient built from explicit transposes. */
export const matMul2d = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, w, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
  save([x, w]);
  return {
    value: tf.matMul(x, w) as tf.Tensor,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [
        tf.matMul(dy as tf.Tensor2D, tf.transpose(ws)),
        tf.matMul(tf.transpose(xs), dy as tf.Tensor2D),
      ];
    },
  };
}) as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/**
 * x [n,k] · wᵀ for a frozen w [m,k] (nn.Linear's layout). On wasm a transposed-B matMul leaves
 * XNNPACK for a plain loop, 7–12× slower over a prompt (`npm run bench -- tfjs-ops`), so there it
 * runs as (w · xᵀ)ᵀ, whose transposes move activations rather than the weight, with dx = dy · w;
 * for a few rows (decoding) the lab's own kernel reads w's rows in place (fewRowsLinear.ts).
 * Elsewhere, and for a weight being trained, the plain transposed matMul.
 */
export function matMulByRows(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  if (tf.getBackend() !== 'wasm' || (w instanceof tf.Variable && w.trainable))
    return tf.matMul(x, w, false, true);
  const viaWeightRows = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const input = args[0] as tf.Tensor2D;
    return {
      value: fewRowsApplies(input, w)
        ? fewRowsLinear(input, w)
        : (tf.transpose(tf.matMul(w, tf.transpose(input))) as tf.Tensor),
      gradFunc: (dy: tf.Tensor) => [inputGradient(dy as tf.Tensor2D, w)],
    };
  }) as (input: tf.Tensor2D) => tf.Tensor2D;
  return viaWeightRows(x);
}

/**
 * A copy packed for one call holds at most this many floats (32 MB): a 0.5B model's MLP weight is
 * one block, its tied head 17.
 */
const PACKED_COPY_ELEMENTS = 1 << 23;
/**
 * Below this many bytes in tfjs, XNNPACK may keep its packed copies: held twice, the weights
 * still leave half of the 4 GiB wasm heap to the activations.
 */
export const PACKED_COPIES_KEPT_BELOW_BYTES = 2 ** 30;

/**
 * dy · w for a frozen w on wasm. XNNPACK packs a matMul's right operand and keeps the packed copy
 * until that tensor is disposed, so dy · w leaves every frozen weight held twice after a model's
 * first backward. For a small model that is the fast way. Past PACKED_COPIES_KEPT_BELOW_BYTES (a
 * 0.5B base: its LoRA update ran out of the wasm heap, EXPERIMENTS §6) each call multiplies by a
 * copy of w made for it and disposed after it, which takes the packed copy with it: the same
 * kernel on the same values, in row blocks for a large w (a tied head) whose partial products
 * are summed. Its price is a pass over w per call (`npm run bench -- tfjs-ops`).
 */
export function inputGradient(
  dy: tf.Tensor2D,
  w: tf.Tensor2D,
  keepPackedBelowBytes = PACKED_COPIES_KEPT_BELOW_BYTES,
): tf.Tensor2D {
  if (tf.memory().numBytes < keepPackedBelowBytes) return tf.matMul(dy, w) as tf.Tensor2D;
  const [m, k] = w.shape;
  const rowsPerBlock = Math.max(1, Math.floor(PACKED_COPY_ELEMENTS / k));
  const product = (dyPart: tf.Tensor2D, wPart: tf.Tensor2D) => {
    const term = tf.matMul(dyPart, wPart) as tf.Tensor2D;
    wPart.dispose();
    return term;
  };
  if (m <= rowsPerBlock) return product(dy, tf.mul(w, tf.scalar(1)) as tf.Tensor2D);
  let dx: tf.Tensor2D | null = null;
  for (let first = 0; first < m; first += rowsPerBlock) {
    const rows = Math.min(rowsPerBlock, m - first);
    const dyPart = tf.slice(dy, [0, first], [dy.shape[0], rows]);
    const term = product(dyPart, rowBlock(w, first, rows));
    dyPart.dispose();
    if (!dx) dx = term;
    else {
      const sum: tf.Tensor2D = tf.add(dx, term);
      tf.dispose([dx, term]);
      dx = sum;
    }
  }
  return dx as tf.Tensor2D;
}

/** x [n,k] @ w [k,m] + b [m]. */
export function linear(x: tf.Tensor2D, w: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  return tf.add(matMul2d(x, w as tf.Tensor2D), b);
}

/** LayerNorm over the last axis. */
export function layerNorm(
  x: tf.Tensor2D,
  gain: tf.Tensor,
  bias: tf.Tensor,
  eps: number,
): tf.Tensor2D {
  const { mean, variance } = tf.moments(x, -1, true);
  const normed = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, eps)));
  return tf.add(tf.mul(normed, gain), bias);
}

/** GPT-2's "gelu_new": the tanh approximation. */
export function geluTanh(x: tf.Tensor): tf.Tensor {
  // x·x·x, not pow: pow is ~7× slower on wasm.
  const cube = tf.mul(tf.mul(x, x), x);
  const inner = tf.mul(Math.sqrt(2 / Math.PI), tf.add(x, tf.mul(0.044715, cube)));
  return tf.mul(tf.mul(0.5, x), tf.add(1, tf.tanh(inner)));
}

/**
 * Splits [n, a, b] into n tensors [a, b] (values only: attention's hand-written gradients use
 * it). On the CPU backends one read and n copies in JS, ~5× faster than n gathers of a row on
 * wasm (each a kernel call), themselves much cheaper than slice; elsewhere the gathers.
 */
export function rows(x: tf.Tensor): tf.Tensor2D[] {
  const [n, a, b] = x.shape as [number, number, number];
  const out: tf.Tensor2D[] = [];
  if (onCpuBackend() && x.dtype === 'float32') {
    const values = x.dataSync() as Float32Array;
    const width = a * b;
    for (let i = 0; i < n; i++)
      out.push(tf.tensor2d(values.slice(i * width, (i + 1) * width), [a, b]));
    return out;
  }
  const flat = tf.reshape(x, [n, a * b]);
  for (let i = 0; i < n; i++) out.push(tf.reshape(tf.gather(flat, i), [a, b]));
  return out;
}

/** tfjs on wasm or cpu: tensors live in host memory, so a read and a copy in JS are cheap. */
function onCpuBackend(): boolean {
  const backend = tf.getBackend();
  return backend === 'wasm' || backend === 'cpu';
}

/** A [T,T] additive causal mask: 0 on and below the diagonal, −1e9 above. */
export function causalMask(T: number): tf.Tensor2D {
  return tf.tidy(() => {
    const ones = tf.ones([T, T]);
    const lower = tf.linalg.bandPart(ones, -1, 0);
    return tf.mul(tf.sub(1, lower), -1e9) as tf.Tensor2D;
  });
}

/**
 * Causal self-attention on q, k, v [BH, T, hd] → [BH, T, hd], with a hand-written
 * backward: dS = P ⊙ (dP − D) with D = rowsum(dP ⊙ P) = rowsum(dy ⊙ y) (FlashAttention's
 * identity, one batched op instead of a reduction per slice), everything else 2D matMuls. The [T,T]
 * matrices stay per-slice 2D tensors from start to end: gathering or transposing them
 * costs more than the matMuls (wasm), so products that would need Pᵀ or dSᵀ are
 * computed transposed instead (dVᵀ = dyᵀ·P, dKᵀ = qᵀ·dS) and turned back once, batched.
 */
export const causalAttention = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [q, k, v, save] = args as [tf.Tensor3D, tf.Tensor3D, tf.Tensor3D, tf.GradSaveFunc];
  const [n, T, hd] = q.shape;
  const scale = 1 / Math.sqrt(hd);
  const mask = causalMask(T);
  const qs = rows(tf.mul(q, scale));
  const kTs = rows(tf.transpose(k, [0, 2, 1]));
  const vs = rows(v);
  const probs = qs.map((qi, i) => tf.softmax(tf.add(tf.matMul(qi, kTs[i]!), mask)) as tf.Tensor2D);
  const y: tf.Tensor = tf.stack(probs.map((pi, i) => tf.matMul(pi, vs[i]!)));
  save([q, k, v, y, ...probs]);
  return {
    value: y,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [qS, kS, vS, yS, ...ps] = saved as tf.Tensor2D[];
      const dys = rows(dy);
      const ds = rows(tf.sum(tf.mul(dy, yS!), -1, true));
      const dyTs = rows(tf.transpose(dy, [0, 2, 1]));
      const vTs = rows(tf.transpose(vS!, [0, 2, 1]));
      const ks = rows(kS!);
      const qTs = rows(tf.mul(tf.transpose(qS!, [0, 2, 1]), scale));
      const dQ: tf.Tensor2D[] = [];
      const dKT: tf.Tensor2D[] = [];
      const dVT: tf.Tensor2D[] = [];
      for (let i = 0; i < n; i++) {
        const p = ps[i]!;
        const dP = tf.matMul(dys[i]!, vTs[i]!);
        const dS = tf.mul(p, tf.sub(dP, ds[i]!));
        dQ.push(tf.matMul(dS, ks[i]!));
        dKT.push(tf.matMul(qTs[i]!, dS));
        dVT.push(tf.matMul(dyTs[i]!, p));
      }
      return [
        tf.mul(tf.stack(dQ), scale),
        tf.transpose(tf.stack(dKT), [0, 2, 1]),
        tf.transpose(tf.stack(dVT), [0, 2, 1]),
      ];
    },
  };
}) as (q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor3D) => tf.Tensor3D;

/** Embedding lookup as a one-hot matMul: tf.gather's gradient is missing on wasm. */
export function embed(ids: tf.Tensor1D, table: tf.Tensor2D): tf.Tensor2D {
  const vocab = table.shape[0];
  // int32 one-hot then cast: a float32 one-hot returns integer bit patterns on wasm.
  const oneHot = tf.cast(tf.oneHot(ids, vocab, 1, 0, 'int32'), 'float32') as tf.Tensor2D;
  return matMul2d(oneHot, table);
}

/**
 * Rows of x [n, d] at `indices` [m] → [m, d], with a gradient that works on wasm (tf.gather's
 * needs UnsortedSegmentSum, missing there): the backward scatters dy back with scatterND, which
 * sums rows picked more than once.
 */
export const gatherRows = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, indices, save] = args as [tf.Tensor2D, tf.Tensor1D, tf.GradSaveFunc];
  save([indices]);
  const [n, d] = x.shape;
  return {
    value: tf.gather(x, indices) as tf.Tensor,
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [picked] = saved as [tf.Tensor1D];
      return [tf.scatterND(tf.reshape(picked, [-1, 1]), dy, [n, d]), tf.zerosLike(picked)];
    },
  };
}) as (x: tf.Tensor2D, indices: tf.Tensor1D) => tf.Tensor2D;

/**
 * Rows of x [n, …] at host-known `picked` → [picked.length, …], for inference (no gradient):
 * the KV caches a sampler copies to its rows and compacts as rows finish. On the CPU backends
 * the copy is made in JS, ~15× faster than wasm's gather (a per-element loop: 20 ms for a 1.4 MB
 * cache); elsewhere (tfjs WebGPU) tf.gather, which keeps the data on the device.
 */
export function copyRows<T extends tf.Tensor>(x: T, picked: readonly number[]): T {
  const [n, ...rest] = x.shape;
  if (!onCpuBackend() || x.dtype !== 'float32' || !n)
    return tf.gather(x, tf.tensor1d(picked as number[], 'int32')) as T;
  const width = x.size / n;
  const source = x.dataSync() as Float32Array;
  const out = new Float32Array(picked.length * width);
  picked.forEach((row, i) => {
    out.set(source.subarray(row * width, (row + 1) * width), i * width);
  });
  return tf.tensor(out, [picked.length, ...rest], 'float32') as T;
}
