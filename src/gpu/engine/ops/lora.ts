// lora.wgsl: LoRA's B side (up, du, dB) over a site's column segments; the A side is matmul.wgsl's.
import { grid2d } from '../../kernels/runKernel';
import { type Bindable, type DispatchSpec, uniforms } from '../runtime';

/** One adapter's output columns inside y's (or dy's) rows: `width` of them from `offset`. */
export interface LoraSegment {
  offset: number;
  width: number;
}

/**
 * A site's adapters (one to three sharing an input: q, k, v; gate, up): M rows of y, each
 * rowStride floats, the adapters' columns as segments; u and du rows hold segments·r floats,
 * B is the segments' B stacked [Σ widths, r].
 */
export interface LoraColumns {
  M: number;
  r: number;
  scale: number;
  rowStride: number;
  segments: readonly LoraSegment[];
}

/** lora.wgsl's version for the rank: four k at a time (vec4s) where r is a multiple of 4. */
const entryFor = (c: LoraColumns, entry: 'up' | 'grad_u' | 'grad_b') =>
  c.r % 4 === 0 ? `${entry}_r4` : entry;
/** Invocations' k per element of du or dB: four in the _r4 versions. */
const kPer = (c: LoraColumns) => (c.r % 4 === 0 ? 4 : 1);

/** Stacked B's rows: every segment's columns. */
export const loraWidth = (c: LoraColumns) => c.segments.reduce((n, s) => n + s.width, 0);

const loraUniforms = (c: LoraColumns, accumulate: boolean) => {
  if (c.segments.length < 1 || c.segments.length > 3)
    throw new Error(`lora: ${c.segments.length} segments (1 to 3)`);
  const seg = (i: number): [['u', number], ['u', number]] => [
    ['u', c.segments[i]?.offset ?? 0],
    ['u', c.segments[i]?.width ?? 0],
  ];
  return uniforms([
    ['u', c.M],
    ['u', loraWidth(c)],
    ['u', c.r],
    ['u', accumulate ? 4 : 0],
    ['f', c.scale],
    ['u', c.rowStride],
    ['u', c.segments.length],
    ['u', 0],
    ...seg(0),
    ...seg(1),
    ...seg(2),
    ['u', 0],
    ['u', 0],
  ]);
};

/** y[:, segments] (+)= scale·u·Bᵀ, u [M, n·r], B [Σ widths, r]. */
export function loraUp(
  c: LoraColumns,
  u: Bindable,
  b: Bindable,
  y: Bindable,
  accumulate = true,
): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: entryFor(c, 'up'),
    bindings: [
      ['r', u],
      ['r', b],
      ['w', y],
    ],
    uniforms: loraUniforms(c, accumulate),
    // Four adjacent columns per invocation (lora.wgsl's `up`).
    workgroups: grid2d(Math.ceil((c.M * Math.ceil(loraWidth(c) / 4)) / 64)),
    label: 'lora_up',
  };
}

/** du [M, n·r] = scale·dy[:, segment t]·B_t, each segment's r columns. */
export function loraGradU(c: LoraColumns, dy: Bindable, b: Bindable, du: Bindable): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: entryFor(c, 'grad_u'),
    bindings: [
      ['r', dy],
      ['r', b],
      ['w', du],
    ],
    uniforms: loraUniforms(c, false),
    workgroups: grid2d(Math.ceil((c.M * c.segments.length * (c.r / kPer(c))) / 64)),
    label: 'lora_grad_u',
  };
}

/** dB [Σ widths, r] (+)= scale·dy[:, segments]ᵀ·u (each segment with its r columns of u). */
export function loraGradB(
  c: LoraColumns,
  dy: Bindable,
  u: Bindable,
  db: Bindable,
  accumulate: boolean,
): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: entryFor(c, 'grad_b'),
    bindings: [
      ['r', dy],
      ['r', u],
      ['w', db],
    ],
    uniforms: loraUniforms(c, accumulate),
    workgroups: grid2d(Math.ceil((loraWidth(c) * (c.r / kPer(c))) / 64)),
    label: 'lora_grad_b',
  };
}
