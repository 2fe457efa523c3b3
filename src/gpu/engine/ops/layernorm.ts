import { type Bindable, type DispatchSpec, uniforms } from '../runtime';

const lnUniforms = (R: number, D: number, eps: number, flags: number, gOff = 0, bOff = 0) =>
  uniforms([
    ['u', R],
    ['u', D],
    ['f', eps],
    ['u', flags],
    ['u', gOff],
    ['u', bOff],
    ['u', 0],
    ['u', 0],
  ]);

export function layerNormForward(
  x: Bindable,
  gamma: Bindable,
  beta: Bindable,
  y: Bindable,
  stats: Bindable,
  R: number,
  D: number,
  eps: number,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'forward',
    bindings: [
      ['r', x],
      ['r', gamma],
      ['r', beta],
      ['w', y],
      ['w', stats],
    ],
    uniforms: lnUniforms(R, D, eps, 0),
    workgroups: [Math.ceil(R / 64)],
    label: 'layernorm',
  };
}

export function layerNormBackwardDx(
  x: Bindable,
  gamma: Bindable,
  dy: Bindable,
  stats: Bindable,
  dx: Bindable,
  R: number,
  D: number,
  accumulate: boolean,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'backward_dx',
    bindings: [
      ['r', x],
      ['r', gamma],
      ['r', dy],
      ['r', stats],
      ['w', dx],
    ],
    uniforms: lnUniforms(R, D, 0, accumulate ? 4 : 0),
    workgroups: [Math.ceil(R / 64)],
    label: 'layernorm_bwd_dx',
  };
}

/** dγ, dβ += into the flat gradient buffer at gOff, bOff (floats). */
export function layerNormBackwardParams(
  x: Bindable,
  dy: Bindable,
  stats: Bindable,
  grads: Bindable,
  gOff: number,
  bOff: number,
  R: number,
  D: number,
): DispatchSpec {
  return {
    shader: 'layernorm.wgsl',
    entry: 'backward_params',
    bindings: [
      ['r', x],
      ['r', dy],
      ['r', stats],
      ['w', grads],
    ],
    uniforms: lnUniforms(R, D, 0, 0, gOff, bOff),
    workgroups: [Math.ceil(D / 64)],
    label: 'layernorm_bwd_params',
  };
}
