// Fused per-token GRPO loss forward: shaders/grpo_token_loss.wgsl.
import type { GrpoTokenInputs, GrpoTokenOptions } from './reference';
import { type KernelSpec, runKernel } from './runKernel';

export const GRPO_TOKEN_LOSS_VERSIONS = ['v1_token_per_thread', 'v2_four_per_thread'] as const;
export type GrpoTokenLossVersion = (typeof GRPO_TOKEN_LOSS_VERSIONS)[number];

const WORKGROUP_SIZE = 64;
const TOKENS_PER_THREAD: Record<GrpoTokenLossVersion, number> = {
  v1_token_per_thread: 1,
  v2_four_per_thread: 4,
};

export type GrpoTokenBuffers = { [K in keyof GrpoTokenInputs]: Float32Array<ArrayBuffer> };

export function grpoTokenLossSpec(
  version: GrpoTokenLossVersion,
  inputs: GrpoTokenBuffers,
  options: GrpoTokenOptions,
): KernelSpec {
  const n = inputs.logp.length;
  for (const [name, values] of Object.entries(inputs))
    if (values.length !== n)
      throw new Error(`grpo_token_loss: ${name} has ${values.length} ≠ ${n}`);
  const workgroups = Math.max(1, Math.ceil(n / (WORKGROUP_SIZE * TOKENS_PER_THREAD[version])));
  if (workgroups > 65535) throw new Error(`grpo_token_loss ${version}: too many tokens (${n})`);
  // struct Params { n: u32, eps_low: f32, eps_high: f32, beta: f32, grad_off: u32, … }
  const uniforms = new ArrayBuffer(32);
  new Uint32Array(uniforms, 0, 1)[0] = n;
  new Float32Array(uniforms, 4, 3).set([options.epsilonLow, options.epsilonHigh, options.beta]);
  return {
    shader: 'grpo_token_loss.wgsl',
    entryPoint: version,
    inputs: [inputs.logp, inputs.oldLogp, inputs.refLogp, inputs.advantage, inputs.mask],
    outputLengths: [n],
    uniforms,
    workgroups: [workgroups],
  };
}

export async function grpoTokenLoss(
  device: GPUDevice,
  version: GrpoTokenLossVersion,
  inputs: GrpoTokenBuffers,
  options: GrpoTokenOptions,
): Promise<Float32Array> {
  const [loss] = await runKernel(device, grpoTokenLossSpec(version, inputs, options));
  if (!loss) throw new Error('grpo_token_loss: missing output');
  return loss;
}
