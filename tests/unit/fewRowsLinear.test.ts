// The lab's hand-assembled WebAssembly kernel for x·Wᵀ over a few rows (model/fewRowsLinear.ts),
// checked against a plain TypeScript reference on fresh random inputs: on its own over a plain
// and a shared memory (the threaded backend's kind), and inside tfjs wasm through matMulByRows,
// gradient included.
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, describe, expect, it } from 'vitest';
import { initBackend } from '../../src/gpu/backend';
import { FEW_ROWS_MAX, fewRowsApplies, instantiateFewRows } from '../../src/model/fewRowsLinear';
import { inputGradient, matMulByRows } from '../../src/model/ops';

function randomValues(count: number): Float32Array {
  return Float32Array.from({ length: count }, () => Math.random() * 2 - 1);
}

/** out[r, i] = Σ_j x[r, j] · w[i, j], in double precision. */
function reference(x: Float32Array, w: Float32Array, n: number, m: number, k: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < n; r++)
    for (let i = 0; i < m; i++) {
      let sum = 0;
      for (let j = 0; j < k; j++) sum += x[r * k + j]! * w[i * k + j]!;
      out.push(sum);
    }
  return out;
}

function expectClose(actual: ArrayLike<number>, expected: number[], k: number): void {
  expect(actual.length).toBe(expected.length);
  // float32 sums of k products of values in [-1, 1]: error well under k·2⁻²³ per term.
  const tolerance = 1e-6 * k;
  for (let i = 0; i < expected.length; i++)
    expect(Math.abs(actual[i]! - expected[i]!)).toBeLessThan(tolerance);
}

describe('fewRowsLinear: x·Wᵀ for a few rows', () => {
  afterAll(async () => {
    await initBackend('cpu');
  });

  it.each([false, true])('the module alone, shared memory %s', (shared) => {
    const memory = new WebAssembly.Memory(
      shared ? { initial: 16, maximum: 65536, shared: true } : { initial: 16 },
    );
    const rowsFunction = instantiateFewRows(memory);
    expect(rowsFunction).not.toBeNull();
    for (const [m, k, n] of [
      [1, 16, 1],
      [37, 48, 3],
      [130, 64, 4],
    ] as const) {
      const w = randomValues(m * k);
      const x = randomValues(n * k);
      // Place them at odd offsets (4-byte, not 16-byte aligned), as tfjs's heap may.
      const wAt = 4;
      const xAt = wAt + w.byteLength + 12;
      const outAt = xAt + x.byteLength + 4;
      new Float32Array(memory.buffer, wAt, m * k).set(w);
      new Float32Array(memory.buffer, xAt, n * k).set(x);
      rowsFunction!(wAt, xAt, outAt, m, k, n);
      expectClose(new Float32Array(memory.buffer, outAt, n * m), reference(x, w, n, m, k), k);
    }
  });

  it('runs inside tfjs wasm through matMulByRows, values and input gradient', async () => {
    await initBackend('wasm');
    const m = 53;
    const k = 96;
    const w = tf.tensor2d(randomValues(m * k), [m, k]);
    for (let n = 1; n <= FEW_ROWS_MAX; n++) {
      const xValues = randomValues(n * k);
      const x = tf.tensor2d(xValues, [n, k]);
      expect(fewRowsApplies(x, w)).toBe(true);
      const before = tf.memory().numTensors;
      const value = tf.tidy(() => matMulByRows(x, w));
      expect(tf.memory().numTensors).toBe(before + 1);
      expectClose(
        await value.data(),
        reference(xValues, (await w.data()) as Float32Array, n, m, k),
        k,
      );
      const dy = tf.tensor2d(randomValues(n * m), [n, m]);
      const grad = tf.grad((input: tf.Tensor) =>
        tf.sum(tf.mul(matMulByRows(input as tf.Tensor2D, w), dy)),
      )(x);
      const expectedGrad = tf.matMul(dy, w);
      const [g, e] = [await grad.data(), await expectedGrad.data()];
      for (let i = 0; i < e.length; i++) expect(g[i]).toBeCloseTo(e[i]!, 4);
      tf.dispose([x, value, dy, grad, expectedGrad]);
    }
    // Where it does not apply, the same product the other way.
    const many = tf.tensor2d(randomValues((FEW_ROWS_MAX + 1) * k), [FEW_ROWS_MAX + 1, k]);
    const oddWidth = tf.tensor2d(randomValues(2 * 7), [2, 7]);
    const oddWeight = tf.tensor2d(randomValues(5 * 7), [5, 7]);
    expect(fewRowsApplies(many, w)).toBe(false);
    expect(fewRowsApplies(oddWidth, oddWeight)).toBe(false);
    expectClose(
      await matMulByRows(oddWidth, oddWeight).data(),
      reference(
        (await oddWidth.data()) as Float32Array,
        (await oddWeight.data()) as Float32Array,
        2,
        5,
        7,
      ),
      7,
    );
    tf.dispose([w, many, oddWidth, oddWeight]);
  });

  // XNNPACK keeps a packed copy of a matMul's right operand until that tensor is disposed. Past
  // its memory bound (here 0, so every call) the input gradient through a frozen weight leaves
  // none behind (ops.ts, inputGradient): 16 weights of 16 MB held twice would grow the heap by
  // ~256 MB. A weight past a block (a tied head) goes in row blocks: the same product.
  it('the input gradient through frozen weights, past its memory bound, keeps no packed copy', async () => {
    await initBackend('wasm');
    const backend = tf.backend() as unknown as { wasm: { asm: { memory: WebAssembly.Memory } } };
    const heapBytes = () => backend.wasm.asm.memory.buffer.byteLength;
    const weights = Array.from({ length: 16 }, () => tf.fill([2048, 2048], 0.5) as tf.Tensor2D);
    const dy = tf.fill([8, 2048], 0.25) as tf.Tensor2D;
    const backward = (w: tf.Tensor2D) =>
      tf.tidy(() => {
        // Σ over 2048 rows of 0.25 · 0.5.
        expect(inputGradient(dy, w, 0).dataSync()[0]).toBe(256);
      });
    backward(weights[0]!);
    const before = heapBytes();
    for (const w of weights) backward(w);
    expect(heapBytes() - before).toBeLessThan(96 * 2 ** 20);
    tf.dispose([...weights, dy]);

    // 9M floats: two row blocks, against the plain product.
    const [m, k, n] = [35_000, 256, 3];
    const head = tf.tensor2d(randomValues(m * k), [m, k]);
    const dyValues = randomValues(n * m);
    const headGradient = tf.tensor2d(dyValues, [n, m]);
    const blocked = await inputGradient(headGradient, head, 0).data();
    const plain = await tf.matMul(headGradient, head).data();
    for (let i = 0; i < plain.length; i++)
      expect(Math.abs(blocked[i]! - plain[i]!)).toBeLessThan(1e-6 * m);
    tf.dispose([head, headGradient]);
  });

  it('does not apply off wasm', async () => {
    await initBackend('cpu');
    const x = tf.zeros([1, 16]) as tf.Tensor2D;
    const w = tf.zeros([4, 16]) as tf.Tensor2D;
    expect(fewRowsApplies(x, w)).toBe(false);
    tf.dispose([x, w]);
  });
});
