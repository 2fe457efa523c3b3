// Limits planned, not discovered: the adapter limits the engine asks for at device creation,
// and every buffer a model or a batch will need, checked against them before anything is
// uploaded. A model or batch that does not fit is refused in words: bytes needed, bytes the
// adapter allows, what to change.
import type { ModelConfig } from '../../model/config';
import { paramLayout } from './layout';

/** The limits the engine requests (the adapter's own values) and plans against. */
export const NEEDED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
] as const;

export type DeviceLimits = Record<(typeof NEEDED_LIMITS)[number], number>;

export interface PlannedBuffer {
  name: string;
  bytes: number;
}

/** The model's flat buffers: weights, gradients, Adam's two moments, the decay mask. */
export function modelBuffers(config: ModelConfig): PlannedBuffer[] {
  const bytes = paramLayout(config).total * 4;
  return ['params', 'grads', 'adam-m', 'adam-v', 'decay'].map((name) => ({ name, bytes }));
}

/** A training batch's largest activations (B rows of T tokens; the head's rows padded to ×4). */
export function batchBuffers(config: ModelConfig, B: number, T: number): PlannedBuffer[] {
  const { nEmbd: D, nInner: F, vocabSize: V, nHead: H } = config;
  const R = B * T;
  const VP = Math.ceil(V / 4) * 4;
  return [
    { name: 'logits', bytes: R * VP * 4 },
    { name: 'qkv', bytes: R * 3 * D * 4 },
    { name: 'mlp', bytes: R * F * 4 },
    { name: 'attention lse', bytes: H * R * 4 },
  ];
}

/**
 * Bytes a training pass holds per token (row of B·T) of activations and gradients: the
 * residual stream per layer, each layer's saved norms, q|k|v, attention, MLP pre- and post-GELU
 * (DeviceModel's layerBuffers), the head's padded logits row, and the backward's scratch.
 */
export function trainingBytesPerToken(config: ModelConfig): number {
  const { nEmbd: D, nInner: F, vocabSize: V, nHead: H, nLayer: L } = config;
  const VP = Math.ceil(V / 4) * 4;
  const perLayer = 7 * D + 2 * F + H + 4;
  const head = VP + 3 * D + 2 + 12;
  const backward = 5 * D + F + H;
  return 4 * ((L + 1) * D + L * perLayer + head + backward);
}

/** The fused decode layer's workgroup storage at one row per workgroup (decode.wgsl). */
export function decodeWorkgroupBytes(config: ModelConfig): number {
  return 4 * (5 * config.nEmbd + config.nInner) + 64;
}

/** Invocations per workgroup the kernels use at most (workgroup_size 64; decode's WG ≤ 64). */
export const INVOCATIONS_NEEDED = 64;

const mib = (bytes: number) =>
  bytes >= 1 << 20 ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : `${bytes} bytes`;

/** Throws, in words, where a planned buffer or the decode layer exceeds the adapter. */
export function checkModelFits(config: ModelConfig, limits: DeviceLimits): void {
  const perBuffer = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const which =
    limits.maxStorageBufferBindingSize <= limits.maxBufferSize
      ? 'maxStorageBufferBindingSize'
      : 'maxBufferSize';
  const [params] = modelBuffers(config);
  if (params && params.bytes > perBuffer)
    throw new Error(
      `the model needs ${mib(params.bytes)} (${params.bytes} bytes) in one buffer for its weights (and as much for gradients and each Adam moment); this adapter allows ${mib(perBuffer)} (${perBuffer} bytes, ${which}): choose a smaller preset (width, layers) or vocabulary`,
    );
  const wg = decodeWorkgroupBytes(config);
  if (wg > limits.maxComputeWorkgroupStorageSize)
    throw new Error(
      `the fused decode layer needs ${wg} bytes of workgroup storage at width ${config.nEmbd} and MLP width ${config.nInner}; this adapter allows ${limits.maxComputeWorkgroupStorageSize} (maxComputeWorkgroupStorageSize): choose a narrower preset`,
    );
  if (INVOCATIONS_NEEDED > limits.maxComputeInvocationsPerWorkgroup)
    throw new Error(
      `the kernels run ${INVOCATIONS_NEEDED} invocations per workgroup; this adapter allows ${limits.maxComputeInvocationsPerWorkgroup} (maxComputeInvocationsPerWorkgroup)`,
    );
}

/** Throws, in words, where one of a batch's buffers exceeds the adapter. */
export function checkBatchFits(
  config: ModelConfig,
  B: number,
  T: number,
  limits: DeviceLimits,
): void {
  const perBuffer = Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  for (const b of batchBuffers(config, B, T))
    if (b.bytes > perBuffer)
      throw new Error(
        `a batch of ${B} sequences × ${T} tokens needs ${mib(b.bytes)} (${b.bytes} bytes) for its ${b.name}; this adapter allows ${mib(perBuffer)} (${perBuffer} bytes) per buffer: lower the memory budget (--memory-budget) or the sequences per step, or choose a smaller vocabulary`,
      );
}

export function limitsOf(device: GPUDevice): DeviceLimits {
  const l = device.limits as unknown as Record<string, number>;
  return Object.fromEntries(NEEDED_LIMITS.map((k) => [k, l[k] ?? 0])) as DeviceLimits;
}
