// A Hub base's frozen weights as tfjs reads them (Hugging Face's names → float32
// tensors), each made from the checkpoint's stored tensor when a forward first asks for it. A
// run on the lab's kernels holds the base on the device (16-bit, uploaded from the stored
// tensors themselves), so tfjs never asks and holds no copy of it; where tfjs runs the model
// (the wasm and cpu backends, a fall-back off the device) the loader makes every weight at once.
// The stored tensors are the checkpoint's files: read from the disk when asked (a folder in the
// CLI) or the download's bytes (the page); let go once tfjs holds every weight.
import * as tf from '@tensorflow/tfjs-core';
import { type StoredTensor, toFloat32 } from '../safetensors';

export class HubWeights extends Map<string, tf.Tensor> {
  private stored: ReadonlyMap<string, StoredTensor> | null;

  /** `merge` changes a weight's float32 values before tfjs takes them (a PEFT adapter merged). */
  constructor(
    stored: ReadonlyMap<string, StoredTensor>,
    private readonly merge?: (name: string, data: Float32Array, shape: number[]) => void,
  ) {
    super();
    this.stored = stored.size > 0 ? stored : null;
  }

  override get(name: string): tf.Tensor | undefined {
    const made = super.get(name);
    if (made || !this.stored) return made;
    const stored = this.stored.get(name);
    if (!stored) return undefined;
    const data = toFloat32(stored);
    this.merge?.(name, data, stored.shape);
    // Kept: a forward asks inside tf.tidy, which would otherwise dispose it on the way out.
    const tensor = tf.keep(tf.tensor(data, stored.shape, 'float32'));
    this.set(name, tensor);
    // Every weight in tfjs: the files' bytes are not needed again.
    if (this.size === this.stored.size) this.stored = null;
    return tensor;
  }

  override has(name: string): boolean {
    return super.has(name) || this.stored?.has(name) === true;
  }

  /** Every weight into tfjs now (where tfjs runs the model); the stored bytes let go. */
  makeAll(): void {
    for (const name of [...(this.stored?.keys() ?? [])]) this.get(name);
  }

  /**
   * The weight as the checkpoint stores it (16-bit where it is), for the device, where tfjs has
   * not made it yet and no adapter is merged into it; undefined otherwise (read tfjs's copy).
   */
  storedTensor(name: string): StoredTensor | undefined {
    if (!this.stored || this.merge || super.has(name)) return undefined;
    return this.stored.get(name);
  }

  override clear(): void {
    super.clear();
    this.stored = null;
  }
}
