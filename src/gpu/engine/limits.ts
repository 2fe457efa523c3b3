// The adapter limits the engine asks for at device creation (the adapter's own values), which
// the one model plans against: a matrix past one binding runs in row ranges, the head's logits
// in row chunks, an update in micro-batches (deviceTransformer.ts, devicePolicy.ts), and a model
// trained in full that one binding cannot hold is refused in words before any buffer is made.

/** The limits the engine requests (the adapter's own values) and plans against. */
export const NEEDED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
] as const;

export type DeviceLimits = Record<(typeof NEEDED_LIMITS)[number], number>;

export function limitsOf(device: GPUDevice): DeviceLimits {
  const l = device.limits as unknown as Record<string, number>;
  return Object.fromEntries(NEEDED_LIMITS.map((k) => [k, l[k] ?? 0])) as DeviceLimits;
}
