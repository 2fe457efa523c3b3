// rmsnorm.wgsl: RMSNorm's forward and backward, over rows or per head (Qwen3's q/k norm).
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, type Dummies, uniforms } from '../runtime';

/** Where RMSNorm's rows lie: row r at off + (r / group)·stride + (r % group)·D (default: [R, D]). */
export interface RowLayout {
  group?: number;
  stride?: number;
  off?: number;
}

const rmsUniforms = (R: number, D: number, eps: number, flags: number, l: RowLayout) =>
  uniforms([
    ['u', R],
    ['u', D],
    ['f', eps],
    ['u', flags],
    ['u', l.group ?? 1],
    ['u', l.stride ?? D],
    ['u', l.off ?? 0],
    ['u', 0],
  ]);

/** y = RMSNorm(x)·w (x null: in place on y); rstd [R] saved for the backward. */
export function rmsNormForward(
  x: Bindable | null,
  w: Bindable,
  y: Bindable,
  rstd: Bindable,
  R: number,
  D: number,
  eps: number,
  dummy: Dummies,
  layout: RowLayout = {},
): DispatchSpec {
  return {
    shader: 'rmsnorm.wgsl',
    entry: 'forward',
    bindings: [
      ['r', x ?? dummy.r],
      ['r', w],
      ['w', y],
      ['w', rstd],
    ],
    uniforms: rmsUniforms(R, D, eps, x ? 0 : 1, layout),
    workgroups: grid2d(Math.ceil(R / 64)),
    label: 'rmsnorm',
  };
}

/** dx (+)= ∂/∂x and dw += ∂/∂w, from the forward's x and rstd. */
export function rmsNormBackward(
  x: Bindable,
  w: Bindable,
  dy: Bindable,
  rstd: Bindable,
  dx: Bindable,
  dw: Bindable,
  R: number,
  D: number,
  accumulate: boolean,
  layout: RowLayout = {},
): DispatchSpec[] {
  return [
    {
      shader: 'rmsnorm.wgsl',
      entry: 'backward_dx',
      bindings: [
        ['r', x],
        ['r', w],
        ['r', dy],
        ['r', rstd],
        ['w', dx],
      ],
      uniforms: rmsUniforms(R, D, 0, accumulate ? 4 : 0, layout),
      workgroups: grid2d(Math.ceil(R / 64)),
      label: 'rmsnorm_bwd_dx',
    },
    {
      shader: 'rmsnorm.wgsl',
      entry: 'backward_dw',
      bindings: [
        ['r', x],
        ['r', dy],
        ['r', rstd],
        ['w', dw],
      ],
      uniforms: rmsUniforms(R, D, 0, 0, layout),
      workgroups: [Math.ceil(D / 64)],
      label: 'rmsnorm_bwd_dw',
    },
  ];
}
