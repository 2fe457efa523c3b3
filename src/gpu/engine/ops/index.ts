// DispatchSpecs for every kernel in shaders/, one file per shader as in shaders/ (a builder per
// entry point, shapes checked there, so a program fails when it is built, not on the device).
export const SHADERS = [
  'matmul.wgsl',
  'layernorm.wgsl',
  'embedding.wgsl',
  'attention.wgsl',
  'attention.wgsl?MAX_V4=32',
  'head_logprob.wgsl',
  'adamw.wgsl',
  'decode.wgsl',
  'decode_layer.wgsl',
  'rows.wgsl',
  'rmsnorm.wgsl',
  'rope.wgsl',
  'swiglu.wgsl',
  'gelu.wgsl',
  'lora.wgsl',
] as const;

export * from './adamw';
export * from './attention';
export * from './decodeLayer';
export * from './embedding';
export * from './gelu';
export * from './headLogprob';
export * from './layernorm';
export * from './lora';
export * from './matmul';
export * from './rmsnorm';
export * from './rope';
export * from './rows';
export * from './swiglu';
