// gelu.wgsl: GELU (tanh) on its own, where fc's adapter adds to its pre-activation first.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, u32s } from '../runtime';

/** h = gelu(pre) over n floats (n a multiple of 4). */
export function geluForward(pre: Bindable, h: Bindable, n: number): DispatchSpec {
  if (n % 4 !== 0) throw new Error(`gelu: ${n} floats, not a multiple of 4`);
  return {
    shader: 'gelu.wgsl',
    entry: 'forward',
    bindings: [
      ['r', pre],
      ['w', h],
    ],
    uniforms: u32s(n, 0, 0, 0),
    workgroups: grid2d(Math.ceil(n / 4 / 64)),
    label: 'gelu',
  };
}

/** dpre = dh · gelu'(pre) over n floats. */
export function geluBackward(pre: Bindable, dh: Bindable, dpre: Bindable, n: number): DispatchSpec {
  if (n % 4 !== 0) throw new Error(`gelu: ${n} floats, not a multiple of 4`);
  return {
    shader: 'gelu.wgsl',
    entry: 'backward',
    bindings: [
      ['r', pre],
      ['r', dh],
      ['w', dpre],
    ],
    uniforms: u32s(n, 0, 0, 0),
    workgroups: grid2d(Math.ceil(n / 4 / 64)),
    label: 'gelu_bwd',
  };
}
