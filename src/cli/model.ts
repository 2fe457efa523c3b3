// `npm run --silent model -- logits --checkpoint DIR --text "..."` → JSON {ids, logits}
//   (logits of the last position, for comparing with other implementations).
// `npm run --silent model -- info --checkpoint DIR` → config, parameter count, lab fields.
// `npm run --silent model -- sample --checkpoint DIR --text "..." [--temperature T --seed S --max N]`
//   → JSON {ids, text, logProbs} of a continuation.
// Options: --backend auto|kernels|tfjs-webgpu|wasm|cpu (default cpu: exact and quick for one sequence).
import * as tf from '@tensorflow/tfjs-core';
import { type BackendChoice, initBackend } from '../gpu/backend';
import { forward, parameterCount } from '../model';
import { loadCheckpointDir } from '../model/checkpointNode';
import { KvCacheSampler } from '../rollout';
import { parseFlags } from './flags';

const args = process.argv.slice(2).filter((a) => a !== '--');
const command = args[0];
const f = parseFlags(args.slice(1));
const dir = f.get('checkpoint');
if (!command || !['logits', 'info', 'sample'].includes(command) || !dir) {
  console.error('usage: model (logits|info|sample) --checkpoint DIR [--text "..."]');
  process.exit(2);
}
try {
  await initBackend((f.get('backend') ?? 'cpu') as BackendChoice);
  const { model, tokenizer, lab } = await loadCheckpointDir(dir, false);
  const ids = tokenizer.encode(f.get('text') ?? '');
  if (command === 'info') {
    console.log(
      JSON.stringify(
        { config: model.config, parameters: parameterCount(model.config), lab },
        null,
        2,
      ),
    );
  } else if (command === 'logits') {
    if (ids.length === 0) throw new Error('--text must not be empty');
    const logits = forward(model, tf.tensor2d([ids], [1, ids.length], 'int32'));
    const all = await logits.data();
    const V = model.config.vocabSize;
    console.log(JSON.stringify({ ids, logits: Array.from(all.slice((ids.length - 1) * V)) }));
  } else {
    const out = await new KvCacheSampler(model).sample([ids], {
      maxNewTokens: Number(f.get('max') ?? 200),
      temperature: Number(f.get('temperature') ?? 0),
      topK: Number(f.get('top-k') ?? 0),
      seed: Number(f.get('seed') ?? 1),
      stopId: tokenizer.eosId,
    });
    const tokens = out.tokens[0]!;
    console.log(
      JSON.stringify({ ids: tokens, text: tokenizer.decode(tokens), logProbs: out.logProbs[0] }),
    );
  }
  process.exit(0);
} catch (err) {
  console.error(`model: ${(err as Error).message}`);
  process.exit(1);
}
