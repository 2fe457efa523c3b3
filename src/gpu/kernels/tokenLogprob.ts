// Fused log-softmax + pick: shaders/token_logprob.wgsl, in several versions.
import { grid2d, type KernelSpec, runKernel } from './runKernel';

export const TOKEN_LOGPROB_VERSIONS = [
  'v1_thread_per_row',
  'v2_workgroup_per_row',
  'v3_online_per_row',
] as const;
export type TokenLogprobVersion = (typeof TOKEN_LOGPROB_VERSIONS)[number];

const WORKGROUP_SIZE = 64;

export function tokenLogprobSpec(
  version: TokenLogprobVersion,
  logits: Float32Array<ArrayBuffer>,
  targets: Uint32Array<ArrayBuffer>,
  rows: number,
  vocab: number,
): KernelSpec {
  if (vocab < 1 || logits.length !== rows * vocab || targets.length !== rows)
    throw new Error(
      `token_logprob: logits ${logits.length} ≠ ${rows}×${vocab} or targets ${targets.length} ≠ ${rows}`,
    );
  for (const t of targets)
    if (t >= vocab) throw new Error(`token_logprob: target ${t} ≥ vocab ${vocab}`);
  const workgroups: [number, number] =
    version === 'v2_workgroup_per_row' ? grid2d(rows) : [Math.ceil(rows / WORKGROUP_SIZE), 1];
  if (workgroups[0] > 65535) throw new Error(`token_logprob ${version}: too many rows (${rows})`);
  return {
    shader: 'token_logprob.wgsl',
    entryPoint: version,
    inputs: [logits, targets],
    outputLengths: [rows, rows],
    uniforms: new Uint32Array([rows, vocab, 0, 0]).buffer,
    workgroups,
  };
}

export async function tokenLogprob(
  device: GPUDevice,
  version: TokenLogprobVersion,
  logits: Float32Array<ArrayBuffer>,
  targets: Uint32Array<ArrayBuffer>,
  rows: number,
  vocab: number,
): Promise<{ logp: Float32Array; entropy: Float32Array }> {
  const [logp, entropy] = await runKernel(
    device,
    tokenLogprobSpec(version, logits, targets, rows, vocab),
  );
  if (!logp || !entropy) throw new Error('token_logprob: missing outputs');
  return { logp, entropy };
}
