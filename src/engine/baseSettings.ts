// The base-model settings as plain data (no tfjs: the page's main thread reads them through
// engine/runConfig.ts): which runs may take a pretrained base (every backend, the kernels included), and the Hub endpoint's default.
import { hasAgent } from '../rl/config';
import type { RunConfig } from './types';

/** Where a base id is fetched from when the run names no hub. */
export const DEFAULT_HUB = 'https://huggingface.co';

/** What cannot run with `base`, each message starting with the field it concerns. */
export function baseProblems(config: RunConfig): { field: string; message: string }[] {
  const problems: { field: string; message: string }[] = [];
  if (config.hub !== undefined && !/^https?:\/\/[^\s/]+/.test(config.hub))
    problems.push({ field: 'hub', message: `hub must be an http(s) address, got "${config.hub}"` });
  if (config.base === undefined) return problems;
  if (config.base.trim() === '') {
    problems.push({ field: 'base', message: 'base must name a folder or a Hub id, got ""' });
    return problems;
  }
  if (!((config.loraRank ?? 0) > 0))
    problems.push({
      field: 'loraRank',
      message:
        'loraRank must be > 0 with a base model: every role trains a LoRA adapter over the frozen base (full fine-tuning of a pretrained model does not fit)',
    });
  if (config.grpo.mode === 'self-plan')
    problems.push({
      field: 'mode',
      message:
        'mode: self-plan writes plan and program in the lab’s own format (<|code|> between them), which a base model’s chat template has no place for: use single or core',
    });
  for (const agent of ['debugger', 'retriever'] as const)
    if (hasAgent(config.grpo.agents, agent))
      problems.push({
        field: 'agents',
        message: `agents: the ${agent} is not available over a base model yet: use planner,coder`,
      });
  return problems;
}
