// LoRA across a run's roles: with loraRank > 0 every role in the topology (Planner unless
// `single`, Coder, Debugger / Retriever when present) is its own adapter over a frozen base.
// On the lab's tiny models each role's base is its own shipped warm start (the Planner's and
// the Coder's were trained apart, on plans and on code: an adapter over the other role's
// weights would start from a model that does not write its role's text, and rank 8 cannot
// re-teach that in minutes). The adapters go into a snapshot as PEFT's files under
// `adapters/<role>/`, beside the base under `<role>/`, so --resume, a page reload and the
// run's ZIP carry them.
import type { GPT, LoadedCheckpoint } from '../model';
import { gptTransformerConfig } from '../model/config';
import { createLora } from '../model/lora';
import { ADAPTER_FILES, adapterFiles, memorySource, readLora } from '../model/loraFiles';
import { loraSettingsOf } from '../model/loraSettings';
import type { Role } from '../rl/config';
import { usesPlanner } from '../rl/config';
import type { FileMap, RunConfig } from './types';

const encoder = new TextEncoder();
const ROLE_ORDER: readonly Role[] = ['planner', 'coder', 'debugger', 'retriever'];

/** The role's models that carry an adapter, in a fixed order. */
export function adaptedRoles(
  config: RunConfig,
  models: Partial<Record<Role, LoadedCheckpoint>>,
): [Role, GPT][] {
  return ROLE_ORDER.filter(
    (role) => models[role] && (role !== 'planner' || usesPlanner(config.grpo.mode)),
  ).map((role) => [role, models[role]!.model]);
}

/** Gives each role a fresh adapter (B = 0: the run starts at the warm start), seeded per role. */
export function attachAdapters(
  config: RunConfig,
  models: Partial<Record<Role, LoadedCheckpoint>>,
): void {
  const settings = loraSettingsOf(config);
  if (!settings) return;
  for (const [role, model] of adaptedRoles(config, models)) {
    if (model.lora) continue;
    const seed = config.grpo.seed * 7919 + ROLE_ORDER.indexOf(role) + 1;
    model.lora = createLora(gptTransformerConfig(model.config), settings, seed);
  }
}

/** Where PEFT is told the adapter's base lives: the role's shipped warm start. */
function baseName(config: RunConfig, role: Role, model: LoadedCheckpoint | undefined): string {
  const copied = model?.lab.copiedFor ? (role === 'debugger' ? 'coder' : 'planner') : role;
  return `public/checkpoints/${config.preset}/${copied}`;
}

/** adapters/<role>/adapter_config.json and adapter_model.safetensors for each adapted role. */
export async function putAdapters(
  files: FileMap,
  config: RunConfig,
  models: Partial<Record<Role, LoadedCheckpoint>>,
): Promise<void> {
  for (const [role, model] of adaptedRoles(config, models)) {
    if (!model.lora) continue;
    const written = await adapterFiles(
      model.lora,
      baseName(config, role, models[role]),
      gptTransformerConfig(model.config),
    );
    files[`adapters/${role}/adapter_config.json`] = encoder.encode(written['adapter_config.json']);
    files[`adapters/${role}/adapter_model.safetensors`] = written['adapter_model.safetensors'];
  }
}

/** Puts the snapshot's adapters back over the restored bases; refuses a snapshot without them. */
export async function restoreAdapters(
  files: FileMap,
  config: RunConfig,
  models: Partial<Record<Role, LoadedCheckpoint>>,
): Promise<void> {
  if (!loraSettingsOf(config)) return;
  for (const [role, model] of adaptedRoles(config, models)) {
    for (const file of ADAPTER_FILES)
      if (!files[`adapters/${role}/${file}`])
        throw new Error(`snapshot has no adapters/${role}/${file} (the run trains LoRA adapters)`);
    model.lora = await readLora(
      memorySource(files, `adapters/${role}`),
      gptTransformerConfig(model.config),
    );
  }
}
