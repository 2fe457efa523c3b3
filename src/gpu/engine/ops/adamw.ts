// adamw.wgsl: the guarded AdamW step over a flat buffer (norm partials, guard and clip, update).
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, uniforms } from '../runtime';

export interface AdamWStep {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** 1 − β1^t, 1 − β2^t. */
  c1: number;
  c2: number;
  maxGradNorm: number;
}

export const NORM_PARTIALS = 256;

export function adamwUniforms(n: number, s: AdamWStep): ArrayBuffer {
  const chunk = Math.ceil(n / NORM_PARTIALS);
  return uniforms([
    ['u', n],
    ['u', chunk],
    ['u', NORM_PARTIALS],
    ['u', 0],
    ['f', s.lr],
    ['f', s.beta1],
    ['f', s.beta2],
    ['f', s.eps],
    ['f', s.weightDecay],
    ['f', s.c1],
    ['f', s.c2],
    ['f', s.maxGradNorm],
  ]);
}

/** The guarded step: norm partials, norm + guard + clip coefficient (stats), update. */
export function adamw(
  n: number,
  u: ArrayBuffer,
  b: {
    grads: Bindable;
    partials: Bindable;
    loss: Bindable;
    stats: Bindable;
    decay: Bindable;
    params: Bindable;
    m: Bindable;
    v: Bindable;
  },
): DispatchSpec[] {
  return [
    {
      shader: 'adamw.wgsl',
      entry: 'norm_partial',
      bindings: [
        ['r', b.grads],
        ['w', b.partials],
      ],
      uniforms: u,
      workgroups: [Math.ceil(NORM_PARTIALS / 64)],
      label: 'grad_norm_partial',
    },
    {
      shader: 'adamw.wgsl',
      entry: 'norm_final',
      bindings: [
        ['r', b.partials],
        ['r', b.loss],
        ['w', b.stats],
      ],
      uniforms: u,
      workgroups: [1],
      label: 'grad_norm_final',
    },
    {
      shader: 'adamw.wgsl',
      entry: 'update',
      bindings: [
        ['r', b.grads],
        ['r', b.decay],
        ['r', b.stats],
        ['w', b.params],
        ['w', b.m],
        ['w', b.v],
      ],
      uniforms: u,
      workgroups: grid2d(Math.ceil(n / 64)),
      label: 'adamw_update',
    },
  ];
}
