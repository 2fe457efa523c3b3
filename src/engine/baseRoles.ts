// Role adapters over one pretrained base (RunConfig.base): the base is held once and frozen,
// and every role in the topology (the Planner unless `single`, the Coder) is its own LoRA
// adapter over it (model/lora.ts), seeded per role as the lab's GPT-2 adapters are
// (engine/loraRoles.ts). The reference policy for the KL term is the base itself. A snapshot
// carries the adapters only, as PEFT's files under `adapters/<role>/` (adapter_config.json names
// the base), never the base: --resume reads the base again from where the run named it.
import { chatPrompts } from '../agents/chatPrompts';
import type { RolePrompts } from '../agents/rolePrompts';
import { hubTransformerConfig } from '../model/families/hubConfig';
import { type HubModel, hubRole } from '../model/families/hubModel';
import { createLora, disposeLora } from '../model/lora';
import { ADAPTER_FILES, adapterFiles, memorySource, readLora } from '../model/loraFiles';
import { loraSettingsOf } from '../model/loraSettings';
import type { Role } from '../rl/config';
import { usesPlanner } from '../rl/config';
import type { HfTokenizer } from '../tokenizer/hfTokenizer';
import type { FileMap, RunConfig } from './types';

/** A loaded pretrained base (the CLI reads a folder or the Hub; the page the Hub). */
export interface BaseModel {
  /** What PEFT records as base_model_name_or_path: the Hub id or the folder given. */
  id: string;
  model: HubModel;
  tokenizer: HfTokenizer;
}

/** The base, its prompts, and each role's view of it with the role's adapter. */
export interface BaseRoles {
  base: BaseModel;
  prompts: RolePrompts;
  roles: Map<Role, HubModel>;
}

const ROLE_ORDER: readonly Role[] = ['planner', 'coder', 'debugger', 'retriever'];

/** The roles that carry an adapter: the Coder, and the Planner unless the mode has none. */
function adaptedRoles(config: RunConfig): Role[] {
  return usesPlanner(config.grpo.mode) ? ['planner', 'coder'] : ['coder'];
}

/** The base as the one transformer's config. */
const configOf = (base: BaseModel) => hubTransformerConfig(base.model.config);

/** Fresh adapters (B = 0: every role starts as the base), seeded per role. */
export function createBaseRoles(config: RunConfig, base: BaseModel): BaseRoles {
  const settings = loraSettingsOf(config, base.model.config.family);
  if (!settings)
    throw new Error('base: every role trains a LoRA adapter over the base: give loraRank > 0');
  const roles = new Map<Role, HubModel>();
  for (const role of adaptedRoles(config)) {
    const seed = config.grpo.seed * 7919 + ROLE_ORDER.indexOf(role) + 1;
    roles.set(role, hubRole(base.model, createLora(configOf(base), settings, seed)));
  }
  return { base, prompts: chatPrompts(base.tokenizer), roles };
}

/** adapters/<role>/adapter_config.json and adapter_model.safetensors for each role. */
export async function putBaseAdapters(files: FileMap, roles: BaseRoles): Promise<void> {
  const encoder = new TextEncoder();
  for (const [role, model] of roles.roles) {
    if (!model.lora) continue;
    const written = await adapterFiles(model.lora, roles.base.id, configOf(roles.base));
    files[`adapters/${role}/adapter_config.json`] = encoder.encode(written['adapter_config.json']);
    files[`adapters/${role}/adapter_model.safetensors`] = written['adapter_model.safetensors'];
  }
}

/** The snapshot's adapters over `base`; refuses a snapshot without them, in words. */
export async function restoreBaseRoles(
  files: FileMap,
  config: RunConfig,
  base: BaseModel,
): Promise<BaseRoles> {
  const roles = new Map<Role, HubModel>();
  for (const role of adaptedRoles(config)) {
    for (const file of ADAPTER_FILES)
      if (!files[`adapters/${role}/${file}`])
        throw new Error(`snapshot has no adapters/${role}/${file} (the run trains LoRA adapters)`);
    const lora = await readLora(memorySource(files, `adapters/${role}`), configOf(base));
    roles.set(role, hubRole(base.model, lora));
  }
  return { base, prompts: chatPrompts(base.tokenizer), roles };
}

/** Frees the adapters (the base's owner frees the base). */
export function disposeBaseRoles(roles: BaseRoles): void {
  for (const model of roles.roles.values()) if (model.lora) disposeLora(model.lora);
}
