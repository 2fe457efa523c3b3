// swiglu.wgsl: SwiGLU's silu(gate)·up and its backward.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, u32s } from '../runtime';

function checkI(I: number) {
  if (I % 4 !== 0) throw new Error(`swiglu: width ${I} is not a multiple of 4`);
}

/** h [R, I] = silu(gate)·up, gu [R, 2I]. */
export function swigluForward(gu: Bindable, h: Bindable, R: number, I: number): DispatchSpec {
  checkI(I);
  return {
    shader: 'swiglu.wgsl',
    entry: 'forward',
    bindings: [
      ['r', gu],
      ['w', h],
    ],
    uniforms: u32s(R, I, 0, 0),
    workgroups: grid2d(Math.ceil((R * I) / 4 / 64)),
    label: 'swiglu',
  };
}

/** dgu [R, 2I] from dh [R, I]. */
export function swigluBackward(
  gu: Bindable,
  dh: Bindable,
  dgu: Bindable,
  R: number,
  I: number,
): DispatchSpec {
  checkI(I);
  return {
    shader: 'swiglu.wgsl',
    entry: 'backward',
    bindings: [
      ['r', gu],
      ['r', dh],
      ['w', dgu],
    ],
    uniforms: u32s(R, I, 0, 0),
    workgroups: grid2d(Math.ceil((R * I) / 4 / 64)),
    label: 'swiglu_bwd',
  };
}
