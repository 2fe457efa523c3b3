// embedding.wgsl: the lookup (a table in row ranges, f32 or 16-bit; learned positions added),
// and the embedding's gradients.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, u32s } from '../runtime';
import type { WeightDtype } from './matmul';

/**
 * x [R, D] = E[ids − lo] for the ids in [lo, hi): E holds rows lo..hi−1 of the embedding as
 * f32 or 16-bit (two to a u32 word).
 */
export function embeddingLookup(
  ids: Bindable,
  table: Bindable,
  x: Bindable,
  R: number,
  D: number,
  dtype: WeightDtype,
  lo = 0,
  hi = 0xffffffff,
  o: { add?: boolean; fromStarts?: number } = {},
): DispatchSpec {
  // fromStarts = T: ids holds each sequence's first position, row b·T + t takes ids[b] + t.
  const flags = (o.add ? 1 : 0) | (o.fromStarts ? 2 : 0);
  return {
    shader: 'embedding.wgsl',
    entry: 'lookup',
    constants: { E_DTYPE: dtype === 'F32' ? 0 : dtype === 'F16' ? 1 : 2 },
    bindings: [
      ['r', ids],
      ['r', table],
      ['w', x],
    ],
    // embedding.wgsl's B, T, D, wte_off, wpe_off, flags
    uniforms: u32s(R, o.fromStarts ?? 1, D, lo, hi, flags, 0, 0),
    workgroups: grid2d(Math.ceil((R * D) / 64)),
    label: o.add ? 'embedding_add' : 'embedding_lookup',
  };
}

/**
 * The embedding's gradients over R rows into the flat gradient buffer: dwte[ids[r]] += dx[r] at
 * wteOff, and (wpeOff given) dwpe[positions[r]] += dx[r] for learned positions.
 */
export function embeddingBackward(
  ids: Bindable,
  dx: Bindable,
  grads: Bindable,
  R: number,
  D: number,
  wteOff: number,
  positions: { buffer: Bindable; wpeOff: number } | null,
): DispatchSpec[] {
  const u = u32s(1, R, D, wteOff, positions?.wpeOff ?? 0, 0, 0, 0);
  const spec = (entry: string, extra: DispatchSpec['bindings']): DispatchSpec => ({
    shader: 'embedding.wgsl',
    entry,
    bindings: [['r', ids], ['r', dx], ['w', grads], ...extra],
    uniforms: u,
    workgroups: [Math.ceil(D / 64)],
    label: `embedding_${entry.replace('backward_', 'bwd_')}`,
  });
  return [
    spec('backward_wte', []),
    ...(positions ? [spec('backward_wpe', [['r', positions.buffer]])] : []),
  ];
}
