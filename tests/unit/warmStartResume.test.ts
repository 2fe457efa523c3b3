// A warm start stopped part-way and resumed from what it saved (`npm run warmstart -- ...
// --resume`) ends with the weights the uninterrupted run ends with, to the bit: for one model
// alone (the single baselines' warm start) and for the pair stopped in the Coder's turn, with
// the Planner already finished. Goes through the CLI's own save and load of OUT/resume/.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadWarmStartResume, saveWarmStartResume } from '../../src/cli/warmstartResume';
import { initBackend } from '../../src/gpu/backend';
import { type LoadedCheckpoint, readValues } from '../../src/model';
import { type WarmStartOptions, warmStartModels } from '../../src/sft/warmStart';

const STEPS = 4;
const base: WarmStartOptions = { preset: 'tiny', seed: 3, steps: STEPS, batchSize: 4, merges: 0 };

async function expectSameWeights(a: LoadedCheckpoint, b: LoadedCheckpoint): Promise<void> {
  const [va, vb] = [await readValues(a.model.params), await readValues(b.model.params)];
  expect([...vb.keys()]).toEqual([...va.keys()]);
  for (const [name, values] of va) expect(vb.get(name), name).toEqual(values);
}

/** Runs the whole warm start, saving the state at each checkpoint; returns the models. */
async function wholeRun(
  options: WarmStartOptions,
  out: string,
  saveAt: (role: string, step: number) => boolean,
) {
  return warmStartModels({
    ...options,
    checkpointEvery: 2,
    onCheckpoint: async (state) => {
      if (saveAt(state.role, state.step)) await saveWarmStartResume(out, ['--test'], state);
    },
  });
}

describe('warm start resume', () => {
  beforeAll(async () => {
    await initBackend('wasm');
  });

  it('one model alone: resumed at step 2 of 4 ends as the whole run', async () => {
    const out = mkdtempSync(join(tmpdir(), 'warm-resume-alone-'));
    const options = { ...base, coderAlone: true };
    const whole = await wholeRun(options, out, (_, step) => step === 2);
    const resume = await loadWarmStartResume(out, ['--test']);
    expect([resume.role, resume.step]).toEqual(['coder', 2]);
    const resumed = await warmStartModels({ ...options, resume });
    await expectSameWeights(whole.coder, resumed.coder);
    expect((resumed.coder.lab?.sft as { steps: number } | undefined)?.steps).toBe(STEPS);
  }, 120_000);

  it('the pair stopped in the Coder’s turn keeps its finished Planner and ends as the whole run', async () => {
    const out = mkdtempSync(join(tmpdir(), 'warm-resume-pair-'));
    const whole = await wholeRun(base, out, (role, step) => role === 'coder' && step === 2);
    const resume = await loadWarmStartResume(out, ['--test']);
    expect([resume.role, resume.step, Object.keys(resume.finished)]).toEqual([
      'coder',
      2,
      ['planner'],
    ]);
    const resumed = await warmStartModels({ ...base, resume });
    await expectSameWeights(whole.planner, resumed.planner);
    await expectSameWeights(whole.coder, resumed.coder);
  }, 120_000);

  it('refuses a state saved by other flags, in one line', async () => {
    const out = mkdtempSync(join(tmpdir(), 'warm-resume-flags-'));
    await wholeRun({ ...base, coderAlone: true, steps: 3 }, out, (_, step) => step === 2);
    await expect(loadWarmStartResume(out, ['--other'])).rejects.toThrow(
      /was saved by `--test`; resume it with the same flags/,
    );
    await expect(loadWarmStartResume(join(out, 'none'), ['--test'])).rejects.toThrow(
      /--resume: no saved warm start in/,
    );
  }, 120_000);
});
