import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '/work/main/src/gpu/backend';
import { createModel, makeConfig, maskedLoss } from '/work/main/src/model';
import { AdamW } from '/work/main/src/model/adamw';
import { optimizerStep } from '/work/main/src/model/train';

const r = await initBackend((process.argv[2] ?? 'wasm') as 'wasm');
console.log(r);
const B = Number(process.argv[3] ?? 16),
  T = Number(process.argv[4] ?? 256);
const model = createModel(makeConfig('tiny', 103), 1);
const opt = new AdamW(model);
const ids = tf.randomUniform([B, T], 0, 103, 'int32') as tf.Tensor2D;
const mask = tf.ones([B, T - 1]) as tf.Tensor2D;
for (let i = 0; i < 6; i++) {
  const t0 = performance.now();
  const { loss } = await optimizerStep(model, opt, () => maskedLoss(model, ids, mask), 1e-3);
  const dt = performance.now() - t0;
  console.log(
    i,
    loss.toFixed(3),
    dt.toFixed(0),
    'ms',
    (((B * T) / dt) * 1000).toFixed(0),
    'tok/s',
    tf.memory().numTensors,
  );
}
const info = await tf.profile(async () => {
  const { value, grads } = tf.variableGrads(
    () => maskedLoss(model, ids, mask),
    [...model.params.values()],
  );
  await value.data();
  for (const g of Object.values(grads)) g.dispose();
  value.dispose();
});
const agg = new Map<string, { n: number; ms: number }>();
for (const k of info.kernels) {
  const a = agg.get(k.name) ?? { n: 0, ms: 0 };
  a.n++;
  a.ms += Number(k.kernelTimeMs);
  agg.set(k.name, a);
}
console.log(
  [...agg]
    .sort((a, b) => b[1].ms - a[1].ms)
    .slice(0, 25)
    .map(([k, v]) => `${k} n=${v.n} ms=${v.ms.toFixed(1)}`)
    .join('\n'),
);
console.log('total kernels', info.kernels.length);
