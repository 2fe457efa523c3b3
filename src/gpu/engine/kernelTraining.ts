// The lab's WebGPU engine behind rl/trainer.ts' RoleTrainer: while the device engine is on
// (kernelSampling.ts), a role's update runs as whole device steps (deviceTrainer.ts) on the
// same device copy of the weights the sampler reads (no upload between them); after each
// one the weights and Adam's moments are copied back into the tfjs model and optimizer, so the
// tfjs side always holds the last finished step. A device that fails (or is lost) mid-update
// turns the engine off and the caller redoes that update on its own backend from those values.
import type { AdamWState } from '../../model/adamw';
import type { GPT } from '../../model/gpt';
import type { PolicySequence, RoleTrainerOptions, RoleUpdate } from '../../rl/policyUpdate';
import { deviceHoldsModel } from './deviceModel';
import { DeviceRoleTrainer } from './deviceTrainer';
import { deviceCopy, kernelEngine, markCopyCurrent, markEngineFailed } from './kernelSampling';

/** Per model: its device trainer, on which engine, and the copy's upload count it last synced Adam at. */
const trainers = new WeakMap<
  GPT,
  { trainer: DeviceRoleTrainer; engine: object; uploads: number }
>();
let deviceUpdates = 0;

/** Updates the device answered (for tests and reports). */
export function deviceUpdateCalls(): number {
  return deviceUpdates;
}

/** What the device trainer needs from RoleTrainer's own state. */
export interface HostOptimizer {
  exportState(): Promise<AdamWState>;
  importState(state: AdamWState): void;
  /** The frozen reference's weights (β > 0), by parameter name. */
  reference(): Promise<Map<string, Float32Array> | null>;
}

/** The update on the device, or null: engine off, shapes it does not hold, or device failure. */
export async function updateOnDevice(
  model: GPT,
  options: RoleTrainerOptions,
  host: HostOptimizer,
  sequences: readonly PolicySequence[],
): Promise<RoleUpdate | null> {
  const e = kernelEngine();
  if (!e || sequences.length === 0) return null;
  const c = model.config;
  if (!deviceHoldsModel(c)) return null;
  // Too long for the context: tfjs's update throws the error that says so.
  if (sequences.some((s) => s.prompt.length + s.completion.length > c.nCtx)) return null;
  try {
    const copy = await deviceCopy(e, model); // the sampler's copy: uploaded only if tfjs moved
    let entry = trainers.get(model);
    if (!entry || entry.engine !== e) {
      const trainer = await DeviceRoleTrainer.create(
        e.rt,
        model,
        options,
        await host.reference(),
        copy.dm,
      );
      entry = { trainer, engine: e, uploads: -1 };
      trainers.set(model, entry);
    }
    if (entry.uploads !== copy.uploads) {
      // tfjs's weights moved without the device (first use, an update on tfjs): Adam's state
      // may have too, so it comes from the host optimizer.
      const state = await host.exportState();
      await entry.trainer.importState({
        iterations: state.step,
        moments: state.moments,
        reference: null,
      });
      entry.uploads = copy.uploads;
    }
    const update = await entry.trainer.update(sequences);
    markCopyCurrent(e, model); // update() wrote the device's weights back into tfjs
    const state = await entry.trainer.exportState();
    host.importState({ step: state.iterations, moments: state.moments });
    deviceUpdates++;
    return update;
  } catch (error) {
    markEngineFailed(e, error);
    return null;
  }
}
