// rope.wgsl: RoPE on q|k rows (rotate-half, a host cos/sin table), and its inverse.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, type Dummies, u32s } from '../runtime';

export interface RopeShape {
  /** Rows of qkv. */
  R: number;
  /** Rows per sequence: row r is position (start) + r % T. */
  T: number;
  H: number;
  kvH: number;
  hd: number;
}

/**
 * RoPE in place on qkv's q and k heads. table: ropeTable's [positions, hd]; start: the first
 * position, a number or a buffer of one per sequence (decode steps). inverse: the backward.
 */
export function rope(
  s: RopeShape,
  table: Bindable,
  qkv: Bindable,
  start: number | Bindable,
  dummy: Dummies,
  inverse = false,
): DispatchSpec {
  if (s.hd % 2 !== 0) throw new Error(`rope: head size ${s.hd} is odd`);
  const fromBuffer = typeof start !== 'number';
  return {
    shader: 'rope.wgsl',
    entry: 'rotate',
    bindings: [
      ['r', table],
      ['r', fromBuffer ? start : dummy.r],
      ['w', qkv],
    ],
    uniforms: u32s(
      s.R,
      s.T,
      s.H,
      s.kvH,
      s.hd,
      fromBuffer ? 0 : start,
      (inverse ? 1 : 0) | (fromBuffer ? 2 : 0),
      (s.H + 2 * s.kvH) * s.hd,
    ),
    workgroups: grid2d(Math.ceil((s.R * (s.H + s.kvH) * (s.hd / 2)) / 64)),
    label: inverse ? 'rope_bwd' : 'rope',
  };
}
