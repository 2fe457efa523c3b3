// rows.wgsl: rows gathered from and scattered into a matrix.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, u32s } from '../runtime';

/** dst[i, :] = src[sel[i], :] for i < n (D a multiple of 4). */
export const gatherRows = (
  src: Bindable,
  sel: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
) => rowsDispatch('gather', src, sel, dst, n, R, D);

/** dst[r, :] = src[inv[r], :] where inv[r] < n, else 0, for the R rows (D a multiple of 4). */
export const scatterRows = (
  src: Bindable,
  inv: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
) => rowsDispatch('scatter', src, inv, dst, n, R, D);

function rowsDispatch(
  entry: 'gather' | 'scatter',
  src: Bindable,
  index: Bindable,
  dst: Bindable,
  n: number,
  R: number,
  D: number,
): DispatchSpec {
  if (D % 4 !== 0) throw new Error(`${entry} rows: width ${D} is not a multiple of 4`);
  return {
    shader: 'rows.wgsl',
    entry,
    bindings: [
      ['r', src],
      ['r', index],
      ['w', dst],
    ],
    uniforms: u32s(n, R, D, 0),
    // Sized for n = R, so a program built once serves every n ≤ R (its uniforms rewritten).
    workgroups: grid2d(Math.ceil((R * D) / 4 / 64)),
    label: `${entry}_rows`,
  };
}
