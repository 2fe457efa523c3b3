// A warm start's resumable state on disk (`npm run warmstart -- ... --resume`): OUT/resume/
// holds state.json (the flags, the role in training, its steps done, the roles finished),
// the role's weights as a checkpoint folder, Adam's moments as adam.safetensors, and each
// finished role's checkpoint under finished-<role>/. Written beside and renamed, so a run
// stopped while saving keeps the previous state; removed once the warm start is saved.
import { existsSync } from 'node:fs';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ModelRole } from '../model';
import { decodeSafetensors, encodeSafetensors, type NamedTensor } from '../model';
import { loadCheckpointDir, saveCheckpointDir } from '../model/checkpointNode';
import type { WarmStartResume } from '../sft/warmStart';

interface ResumeJson {
  /** The command's flags without --resume: a resume must repeat them. */
  args: string[];
  role: ModelRole;
  step: number;
  finished: ModelRole[];
}

export const resumeFolder = (out: string): string => join(out, 'resume');

export async function saveWarmStartResume(
  out: string,
  args: string[],
  state: WarmStartResume,
): Promise<void> {
  const { tokenizer } = state;
  const dir = resumeFolder(out);
  const next = `${dir}.tmp`;
  await rm(next, { recursive: true, force: true });
  await saveCheckpointDir(join(next, state.role), state.model, tokenizer);
  const finished = Object.keys(state.finished) as ModelRole[];
  for (const role of finished) {
    const done = state.finished[role];
    if (done)
      await saveCheckpointDir(join(next, `finished-${role}`), done.model, tokenizer, done.lab);
  }
  const tensors = new Map<string, NamedTensor>();
  state.optimizer.moments.forEach((m, i) => {
    tensors.set(`moment.${i}`, { shape: m.shape, data: m.data });
  });
  const metadata = {
    step: String(state.optimizer.step),
    names: JSON.stringify(state.optimizer.moments.map((m) => m.name)),
  };
  await writeFile(join(next, 'adam.safetensors'), encodeSafetensors(tensors, metadata));
  const json: ResumeJson = { args, role: state.role, step: state.step, finished };
  await writeFile(join(next, 'state.json'), `${JSON.stringify(json, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
  await rename(next, dir);
}

/** The state saved by saveWarmStartResume, refused in one line if absent or of other flags. */
export async function loadWarmStartResume(out: string, args: string[]): Promise<WarmStartResume> {
  const dir = resumeFolder(out);
  const statePath = join(dir, 'state.json');
  if (!existsSync(statePath)) {
    throw new Error(
      `--resume: no saved warm start in ${dir} (a run saves one every --checkpoint-every steps)`,
    );
  }
  const json = JSON.parse(await readFile(statePath, 'utf8')) as ResumeJson;
  if (JSON.stringify(json.args) !== JSON.stringify(args)) {
    throw new Error(
      `--resume: ${dir} was saved by \`${json.args.join(' ')}\`; resume it with the same flags`,
    );
  }
  const { tensors, metadata } = decodeSafetensors(
    await readFile(join(dir, 'adam.safetensors')),
    join(dir, 'adam.safetensors'),
  );
  const names = JSON.parse(metadata.names ?? '[]') as string[];
  const moments = names.map((name, i) => {
    const tensor = tensors.get(`moment.${i}`);
    if (!tensor) throw new Error(`--resume: ${dir}/adam.safetensors lacks moment ${i}`);
    return { name, shape: tensor.shape, data: tensor.data };
  });
  const finished: WarmStartResume['finished'] = {};
  for (const role of json.finished) {
    finished[role] = await loadCheckpointDir(join(dir, `finished-${role}`));
  }
  const { model, tokenizer } = await loadCheckpointDir(join(dir, json.role));
  return {
    role: json.role,
    step: json.step,
    model,
    tokenizer,
    optimizer: { step: Number(metadata.step ?? 0), moments },
    finished,
  };
}

export async function removeWarmStartResume(out: string): Promise<void> {
  await rm(resumeFolder(out), { recursive: true, force: true });
}
