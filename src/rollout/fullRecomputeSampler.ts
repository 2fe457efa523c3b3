// The reference sampler: one row at a time, the whole sequence recomputed with the
// training forward for every new token. Slow; it defines what the fast samplers must give.
import * as tf from '@tensorflow/tfjs-core';
import { forward, type GPT } from '../model';
import { pickToken, rowPrng } from './pick';
import type { SampleOptions, SampleResult, Sampler } from './types';

export class FullRecomputeSampler implements Sampler {
  constructor(private readonly model: GPT) {}

  async sample(prompts: number[][], options: SampleOptions): Promise<SampleResult> {
    const { maxNewTokens, temperature, topK, seed, stopId } = options;
    const nCtx = this.model.config.nCtx;
    const result: SampleResult = { tokens: [], logProbs: [], finished: [] };
    for (const [r, prompt] of prompts.entries()) {
      const prng = rowPrng(seed, r);
      const seq = prompt.slice();
      const tokens: number[] = [];
      const logProbs: number[] = [];
      let finished = false;
      const budget = Math.min(maxNewTokens, nCtx - prompt.length);
      while (tokens.length < budget) {
        const last = tf.tidy(() => {
          const logits = forward(this.model, tf.tensor2d([seq], [1, seq.length], 'int32'));
          return tf.reshape(tf.slice(logits, [0, seq.length - 1, 0], [1, 1, -1]), [-1]);
        });
        const row = (await last.data()) as Float32Array;
        last.dispose();
        const pick = pickToken(row, temperature, topK, prng);
        seq.push(pick.id);
        tokens.push(pick.id);
        logProbs.push(pick.logProb);
        if (pick.id === stopId) {
          finished = true;
          break;
        }
      }
      result.tokens.push(tokens);
      result.logProbs.push(logProbs);
      result.finished.push(finished);
    }
    return result;
  }
}
