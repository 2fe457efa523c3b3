// head_logprob.wgsl: next-token log-probs and entropies from the head's logits, and the
// logits' gradient from a per-token dlogp.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, uniforms } from '../runtime';

/** stride: the logits' row stride (≥ V; the engine pads rows to a multiple of 4). */
const headUniforms = (R: number, V: number, invTemp: number, stride: number) => {
  if (stride < V) throw new Error(`head_logprob: row stride ${stride} < vocabulary ${V}`);
  return uniforms([
    ['u', R],
    ['u', V],
    ['f', invTemp],
    ['u', stride],
  ]);
};

/** out [3R] = logp | entropy | lse. */
export function headLogprobForward(
  logits: Bindable,
  targets: Bindable,
  out: Bindable,
  R: number,
  V: number,
  invTemp = 1,
  stride = V,
): DispatchSpec {
  return {
    shader: 'head_logprob.wgsl',
    entry: 'forward',
    bindings: [
      ['r', logits],
      ['r', targets],
      ['w', out],
    ],
    uniforms: headUniforms(R, V, invTemp, stride),
    workgroups: grid2d(Math.ceil(R / 64)),
    label: 'head_logprob',
  };
}

/** In place: logits ← g[r]·inv_temp·(onehot − p). */
export function headLogprobBackward(
  targets: Bindable,
  g: Bindable,
  stats: Bindable,
  logits: Bindable,
  R: number,
  V: number,
  invTemp = 1,
  stride = V,
): DispatchSpec {
  return {
    shader: 'head_logprob.wgsl',
    entry: 'backward',
    bindings: [
      ['r', targets],
      ['r', g],
      ['r', stats],
      ['w', logits],
    ],
    uniforms: headUniforms(R, V, invTemp, stride),
    workgroups: grid2d(Math.ceil((R * V) / 64)),
    label: 'head_logprob_bwd',
  };
}
