// DispatchSpecs for LoRA's B side (shaders/lora.wgsl); the A side is matmul.wgsl's products.
import { grid2d } from '../kernels/runKernel';
import type { Bindable, DispatchSpec } from './runtime';
import { uniforms } from './runtime';

/** Where y's (or dy's) columns for this adapter lie: row i at i·rowStride + offset, N wide. */
export interface LoraColumns {
  M: number;
  N: number;
  r: number;
  scale: number;
  rowStride: number;
  offset: number;
}

const loraUniforms = (c: LoraColumns, accumulate: boolean) =>
  uniforms([
    ['u', c.M],
    ['u', c.N],
    ['u', c.r],
    ['u', accumulate ? 4 : 0],
    ['f', c.scale],
    ['u', c.rowStride],
    ['u', c.offset],
    ['u', 0],
  ]);

/** y[:, cols] (+)= scale·u·Bᵀ, u [M, r], B [N, r]. */
export function loraUp(
  c: LoraColumns,
  u: Bindable,
  b: Bindable,
  y: Bindable,
  accumulate = true,
): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: 'up',
    bindings: [
      ['r', u],
      ['r', b],
      ['w', y],
    ],
    uniforms: loraUniforms(c, accumulate),
    // Four adjacent columns per invocation (lora.wgsl's `up`).
    workgroups: grid2d(Math.ceil((c.M * Math.ceil(c.N / 4)) / 64)),
    label: 'lora_up',
  };
}

/** du [M, r] = scale·dy[:, cols]·B. */
export function loraGradU(c: LoraColumns, dy: Bindable, b: Bindable, du: Bindable): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: 'grad_u',
    bindings: [
      ['r', dy],
      ['r', b],
      ['w', du],
    ],
    uniforms: loraUniforms(c, false),
    workgroups: grid2d(Math.ceil((c.M * c.r) / 64)),
    label: 'lora_grad_u',
  };
}

/** dB [N, r] (+)= scale·dy[:, cols]ᵀ·u. */
export function loraGradB(
  c: LoraColumns,
  dy: Bindable,
  u: Bindable,
  db: Bindable,
  accumulate: boolean,
): DispatchSpec {
  return {
    shader: 'lora.wgsl',
    entry: 'grad_b',
    bindings: [
      ['r', dy],
      ['r', u],
      ['w', db],
    ],
    uniforms: loraUniforms(c, accumulate),
    workgroups: grid2d(Math.ceil((c.N * c.r) / 64)),
    label: 'lora_grad_b',
  };
}
