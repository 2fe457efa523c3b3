// A Hub base's roles as the base-role tests build them (a Qwen2 chat fixture or a Hub GPT-2): the
// base loaded from its folder, each role's adapter over it (β 0.04: the KL term runs), the
// Coder's update options; and the comparison of the device's adapter gradients with tfjs's.
import * as tf from '@tensorflow/tfjs-core';
import { expect } from 'vitest';
import { createBaseRoles } from '../../src/engine/baseRoles';
import { defaultRunConfig } from '../../src/engine/session';
import { moduleKey } from '../../src/gpu/engine/loraAdapters';
import { folderSource } from '../../src/model/families/folderSourceNode';
import type { HubModel } from '../../src/model/families/hubModel';
import { loadHubModel } from '../../src/model/families/load';
import { PEFT_PREFIX } from '../../src/model/lora';
import { grpoLossOptions } from '../../src/rl/config';
import { Rng } from '../../src/tasks/random';

/**
 * The base at `base` and its roles; `onDemand`: tfjs makes a weight only when a forward reads it
 * (as a kernels run loads a base).
 */
export async function baseRolesOf(base: string, onDemand = false) {
  const loaded = await loadHubModel(folderSource(base), undefined, { onDemand });
  const config = defaultRunConfig({ loraRank: 4, base, grpo: { beta: 0.04 } });
  const roles = createBaseRoles(config, {
    id: base,
    model: loaded.model,
    tokenizer: loaded.tokenizer,
  });
  const options = {
    learningRate: 1e-2,
    temperature: 1,
    numIterations: 1,
    maxGradNorm: 1,
    loss: grpoLossOptions(config.grpo, 'coder'),
    padId: roles.prompts.stopId,
  };
  return { loaded, roles, coder: roles.roles.get('coder')!, options };
}

/** B random too (a fresh B is zero, which leaves A's gradient zero). */
export function randomizeB(role: HubModel, seed: number): Rng {
  const rng = new Rng(seed);
  for (const { b } of role.lora!.modules.values())
    b.assign(
      tf.tensor(
        Float32Array.from({ length: b.size }, () => 0.2 * (rng.next() - 0.5)),
        b.shape,
      ),
    );
  return rng;
}

/**
 * Every A and B of the device's adapter gradients within 1e-3 of tfjs's (relative to the
 * tensor's largest, which is not 0); returns how many were compared.
 */
export function expectDeviceGradients(
  role: HubModel,
  host: ReadonlyMap<string, tf.Tensor>,
  device: ReadonlyMap<string, { A: Float32Array; B: Float32Array }>,
): number {
  let compared = 0;
  for (const module of role.lora!.modules.keys())
    for (const side of ['A', 'B'] as const) {
      const want = host.get(`${PEFT_PREFIX}${module}.lora_${side}.weight`)!.dataSync();
      const got = device.get(moduleKey(module))![side];
      const largest = Math.max(...Array.from(want, Math.abs));
      expect(largest, `${module} ${side}`).toBeGreaterThan(0);
      let worst = 0;
      for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
      expect(worst / largest, `${module} ${side}`).toBeLessThan(1e-3);
      compared++;
    }
  return compared;
}
