// Parameters under GPT-2's names and layouts (Conv1D weights are [in, out]), created from
// a seed with GPT-2's initialisation: N(0, 0.02), residual projections scaled by
// 1/√(2·n_layer), biases 0, LayerNorm gains 1.
import * as tf from '@tensorflow/tfjs-core';
import { Rng } from '../tasks/random';
import { gptTransformerConfig, type ModelConfig } from './config';
import { weightSpecs } from './transformerConfig';

export type ParamInit = 'normal' | 'residual' | 'zeros' | 'ones';

export interface ParamSpec {
  name: string;
  shape: number[];
  init: ParamInit;
}

export function parameterSpecs(config: ModelConfig): ParamSpec[] {
  return weightSpecs(gptTransformerConfig(config)).map(({ name, shape }) => ({
    name,
    shape,
    init: initOf(name, shape),
  }));
}

/** GPT-2's initialisation of a weight, by its name and shape. */
function initOf(name: string, shape: number[]): ParamInit {
  if (name.endsWith('.bias')) return 'zeros';
  if (shape.length === 1) return 'ones'; // a LayerNorm's gain
  return name.endsWith('.c_proj.weight') ? 'residual' : 'normal';
}

/** Seeded initial values, computed in JavaScript so every backend starts from the same numbers. */
export function initialValues(config: ModelConfig, seed: number): Map<string, Float32Array> {
  const prng = new Rng(seed);
  const residualStd = 0.02 / Math.sqrt(2 * config.nLayer);
  const values = new Map<string, Float32Array>();
  for (const spec of parameterSpecs(config)) {
    const data = new Float32Array(spec.shape.reduce((a, b) => a * b, 1));
    if (spec.init === 'ones') data.fill(1);
    else if (spec.init !== 'zeros') {
      const std = spec.init === 'residual' ? residualStd : 0.02;
      for (let i = 0; i < data.length; i++) data[i] = prng.normal() * std;
    }
    values.set(spec.name, data);
  }
  return values;
}

export type Params = Map<string, tf.Variable>;

export function makeVariables(
  config: ModelConfig,
  values: Map<string, Float32Array>,
  trainable = true,
): Params {
  const params: Params = new Map();
  for (const spec of parameterSpecs(config)) {
    const data = values.get(spec.name);
    if (!data) throw new Error(`missing parameter ${spec.name}`);
    const expected = spec.shape.reduce((a, b) => a * b, 1);
    if (data.length !== expected) {
      throw new Error(`parameter ${spec.name}: ${data.length} values, expected ${expected}`);
    }
    // tf.variable copies its initial value: free the temporary, or every load leaks it.
    const initial = tf.tensor(data, spec.shape, 'float32');
    params.set(spec.name, tf.variable(initial, trainable));
    initial.dispose();
  }
  return params;
}

/** Reads every parameter back to JavaScript (await: webgpu cannot read synchronously). */
export async function readValues(params: Params): Promise<Map<string, Float32Array>> {
  const out = new Map<string, Float32Array>();
  for (const [name, v] of params) out.set(name, (await v.data()) as Float32Array);
  return out;
}
