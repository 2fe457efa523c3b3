// x [n,k] · Wᵀ for a frozen nn.Linear weight W [m,k] and a few rows of x (decoding), on tfjs wasm.
//
// Why a kernel of our own: tfjs wasm hands every matMul to XNNPACK with the right operand as the
// weight it packs. Held as [m,k], W can only be the left operand (W·xᵀ), and then XNNPACK's
// micro-kernel computes 8 output columns for the one a decoded token needs: a one-row product
// runs 5× slower than it could. Holding W transposed as well would cost twice its memory (plus
// XNNPACK's packed copy). This kernel instead reads W's rows in place, each dotted with x's rows,
// four SIMD lanes at a time: one pass over W per call, nothing copied
// (`npm run bench -- tfjs-ops`: a one-row product through SmolLM2's head 19 → 3.6 ms).
//
// It is a WebAssembly function assembled below, byte by byte, from the spec's encoding (no
// toolchain), that imports the tfjs wasm backend's own memory, so it reads the tensors where
// tfjs keeps them. Registered as a tfjs kernel, it takes part in tidy and dispose like any op.
// Beside it, on the same memory: rowBlock, a range of a matrix's rows as one memory copy.
import * as tf from '@tensorflow/tfjs-core';

/** Up to this many rows of x, the kernel beats XNNPACK's W·xᵀ (8 columns a pass); beyond, not. */
export const FEW_ROWS_MAX = 4;
/** k must be a multiple of this: the kernel's inner loop takes 16 floats (64 bytes) a turn. */
const K_STEP = 16;
const KERNEL_NAME = 'CoreLabFewRowsLinear';

// --- A small WebAssembly encoder: what one function needs. ---
const uleb = (value: number): number[] => {
  const out: number[] = [];
  let rest = value >>> 0;
  do {
    const low = rest & 0x7f;
    rest >>>= 7;
    out.push(rest ? low | 0x80 : low);
  } while (rest);
  return out;
};
const sleb = (value: number): number[] => {
  const out: number[] = [];
  let rest = value | 0;
  for (;;) {
    const low = rest & 0x7f;
    rest >>= 7;
    const done = (rest === 0 && !(low & 0x40)) || (rest === -1 && low & 0x40);
    out.push(done ? low : low | 0x80);
    if (done) return out;
  }
};
const vector = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const name = (text: string): number[] => vector([...text].map((ch) => [ch.charCodeAt(0)]));
const section = (id: number, body: number[]): number[] => [id, ...uleb(body.length), ...body];

const I32 = 0x7f;
const V128 = 0x7b;
const op = {
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  i32: (value: number) => [0x41, ...sleb(value)],
  add: [0x6a],
  mul: [0x6c],
  shl: [0x74],
  ltU: [0x49],
  geU: [0x4f],
  loop: [0x03, 0x40],
  block: [0x02, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, depth],
  brIf: (depth: number) => [0x0d, depth],
  f32Add: [0x92],
  f32Store: [0x38, 2, 0], // align 2^2, offset 0
  simd: (code: number, ...immediates: number[]) => [0xfd, ...uleb(code), ...immediates],
};
const v128Load = (offset: number) => op.simd(0x00, 2, ...uleb(offset));
const v128Zero = op.simd(0x0c, ...new Array<number>(16).fill(0));
const f32x4Add = op.simd(0xe4);
const f32x4Mul = op.simd(0xe6);
const f32x4Lane = (lane: number) => op.simd(0x1f, lane);

/**
 * `rows(w, x, out, m, k, n)`: out[r·m + i] = Σ_j w[i·k + j] · x[r·k + j], pointers in bytes,
 * k a multiple of 16. For each row of W, for each row of x: four f32x4 accumulators over 64-byte
 * steps, added pairwise, then their lanes. W streams once; x's rows stay in the L1 cache.
 */
function kernelBody(): number[] {
  // Parameters 0–5, then i32 locals 6–13 and v128 locals 14–17.
  const [W, X, OUT, M, K, N] = [0, 1, 2, 3, 4, 5];
  const [ROW, W_END, ROW_BYTES, R, CURSOR, X_CURSOR, ROW_END, OUT_ROW] = [
    6, 7, 8, 9, 10, 11, 12, 13,
  ];
  const ACC = 14;
  // biome-ignore format: one instruction a line would hide the loops
  const code: number[] = [
    ...op.get(K), ...op.i32(2), ...op.shl, ...op.set(ROW_BYTES),
    ...op.get(W), ...op.get(M), ...op.get(ROW_BYTES), ...op.mul, ...op.add, ...op.set(W_END),
    ...op.get(W), ...op.set(ROW), ...op.get(OUT), ...op.set(OUT_ROW),
    ...op.block, ...op.loop, // each row of W
    ...op.get(ROW), ...op.get(W_END), ...op.geU, ...op.brIf(1),
    ...op.get(ROW), ...op.get(ROW_BYTES), ...op.add, ...op.set(ROW_END),
    ...op.i32(0), ...op.set(R),
    ...op.loop, // each row of x
  ];
  for (let a = 0; a < 4; a++) code.push(...v128Zero, ...op.set(ACC + a));
  // biome-ignore format: as above
  code.push(
    ...op.get(X), ...op.get(R), ...op.get(ROW_BYTES), ...op.mul, ...op.add, ...op.set(X_CURSOR),
    ...op.get(ROW), ...op.set(CURSOR),
    ...op.loop, // 64 bytes of the row a turn
  );
  for (let a = 0; a < 4; a++) {
    // biome-ignore format: as above
    code.push(
      ...op.get(ACC + a),
      ...op.get(CURSOR), ...v128Load(16 * a),
      ...op.get(X_CURSOR), ...v128Load(16 * a),
      ...f32x4Mul, ...f32x4Add, ...op.set(ACC + a),
    );
  }
  // biome-ignore format: as above
  code.push(
    ...op.get(X_CURSOR), ...op.i32(64), ...op.add, ...op.set(X_CURSOR),
    ...op.get(CURSOR), ...op.i32(64), ...op.add, ...op.tee(CURSOR),
    ...op.get(ROW_END), ...op.ltU, ...op.brIf(0), ...op.end,
    // out[r·m + i]: the address, then (acc0 + acc1) + (acc2 + acc3), then its lanes.
    ...op.get(OUT_ROW), ...op.get(R), ...op.get(M), ...op.mul, ...op.i32(2), ...op.shl, ...op.add,
    ...op.get(ACC), ...op.get(ACC + 1), ...f32x4Add,
    ...op.get(ACC + 2), ...op.get(ACC + 3), ...f32x4Add, ...f32x4Add, ...op.set(ACC),
    ...op.get(ACC), ...f32x4Lane(0), ...op.get(ACC), ...f32x4Lane(1), ...op.f32Add,
    ...op.get(ACC), ...f32x4Lane(2), ...op.get(ACC), ...f32x4Lane(3), ...op.f32Add,
    ...op.f32Add, ...op.f32Store,
    ...op.get(R), ...op.i32(1), ...op.add, ...op.tee(R), ...op.get(N), ...op.ltU, ...op.brIf(0),
    ...op.end,
    ...op.get(ROW), ...op.get(ROW_BYTES), ...op.add, ...op.set(ROW),
    ...op.get(OUT_ROW), ...op.i32(4), ...op.add, ...op.set(OUT_ROW),
    ...op.br(0), ...op.end, ...op.end,
    ...op.end,
  );
  const locals = vector([
    [8, I32],
    [4, V128],
  ]);
  return vector([...locals, ...code].map((byte) => [byte]));
}

/**
 * The module: imports `env.memory` (shared when the threaded backend's memory is, which then
 * must name its maximum) and exports `rows`.
 */
export function fewRowsModule(sharedMemory: boolean): Uint8Array<ArrayBuffer> {
  const types = section(1, vector([[0x60, ...vector(new Array(6).fill([I32])), 0]]));
  const limits = sharedMemory ? [0x03, 0, ...uleb(65536)] : [0x00, 0];
  const imports = section(2, vector([[...name('env'), ...name('memory'), 0x02, ...limits]]));
  const functions = section(3, vector([[0]]));
  const exports = section(7, vector([[...name('rows'), 0x00, 0]]));
  const code = section(10, vector([kernelBody()]));
  const header = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  return new Uint8Array([...header, ...types, ...imports, ...functions, ...exports, ...code]);
}

export type RowsFunction = (
  w: number,
  x: number,
  out: number,
  m: number,
  k: number,
  n: number,
) => void;

/**
 * Instantiates the kernel over a memory; null where this engine lacks WebAssembly SIMD or will
 * not compile it (a page's policy may allow tfjs's own module and not a second one): the
 * products then stay on XNNPACK.
 */
export function instantiateFewRows(memory: WebAssembly.Memory): RowsFunction | null {
  const shared =
    typeof SharedArrayBuffer !== 'undefined' && memory.buffer instanceof SharedArrayBuffer;
  const bytes = fewRowsModule(shared);
  try {
    if (!WebAssembly.validate(bytes)) return null;
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } });
    return instance.exports.rows as RowsFunction;
  } catch {
    return null;
  }
}

/** What this file needs of tfjs's wasm backend (its public class keeps these untyped). */
interface WasmBackendLike {
  wasm: { asm?: { memory?: unknown }; wasmMemory?: unknown };
  dataIdMap: { get(dataId: object): { memoryOffset: number } };
  makeOutput(shape: number[], dtype: 'float32'): tf.TensorInfo;
}

// One instance per backend (a backend re-created after a lost context gets its own).
const instances = new WeakMap<object, RowsFunction | null>();

function memoryOf(backend: WasmBackendLike): WebAssembly.Memory | null {
  const memory = backend.wasm?.wasmMemory ?? backend.wasm?.asm?.memory;
  return memory instanceof WebAssembly.Memory ? memory : null;
}

function rowsFunctionOf(backend: WasmBackendLike): RowsFunction | null {
  if (!instances.has(backend)) {
    const memory = memoryOf(backend);
    instances.set(backend, memory ? instantiateFewRows(memory) : null);
  }
  return instances.get(backend) ?? null;
}

const ROW_BLOCK_KERNEL = 'CoreLabRowBlock';
const offsetOf = (wasm: WasmBackendLike, t: tf.TensorInfo) =>
  wasm.dataIdMap.get(t.dataId).memoryOffset;
let registered = false;

/** Registers this file's two kernels on tfjs wasm, once. */
function register(): void {
  if (registered) return;
  registered = true;
  tf.registerKernel({
    kernelName: KERNEL_NAME,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend }) => {
      const { x, w } = inputs as { x: tf.TensorInfo; w: tf.TensorInfo };
      const wasm = backend as unknown as WasmBackendLike;
      const rowsFunction = rowsFunctionOf(wasm) as RowsFunction;
      const [n, k] = x.shape as [number, number];
      const m = w.shape[0] as number;
      const out = wasm.makeOutput([n, m], 'float32');
      rowsFunction(offsetOf(wasm, w), offsetOf(wasm, x), offsetOf(wasm, out), m, k, n);
      return out;
    },
  });
  tf.registerKernel({
    kernelName: ROW_BLOCK_KERNEL,
    backendName: 'wasm',
    kernelFunc: ({ inputs, backend, attrs }) => {
      const { w: matrix } = inputs as { w: tf.TensorInfo };
      const { first, rows } = attrs as unknown as { first: number; rows: number };
      const wasm = backend as unknown as WasmBackendLike;
      const width = matrix.shape[1] as number;
      const out = wasm.makeOutput([rows, width], 'float32');
      const start = offsetOf(wasm, matrix) + first * width * 4;
      const memory = memoryOf(wasm) as WebAssembly.Memory;
      new Uint8Array(memory.buffer).copyWithin(
        offsetOf(wasm, out),
        start,
        start + rows * width * 4,
      );
      return out;
    },
  });
}

/**
 * Rows [first, first + rows) of a float32 matrix as a new tensor. On tfjs wasm one memory copy
 * in place of its Slice kernel, which walks element by element (0.9 s for 16 MB of a
 * Qwen2.5-0.5B head; ops.ts' inputGradient takes a large frozen weight in such blocks).
 */
export function rowBlock(w: tf.Tensor2D, first: number, rows: number): tf.Tensor2D {
  const onWasmMemory =
    tf.getBackend() === 'wasm' && memoryOf(tf.backend() as unknown as WasmBackendLike) !== null;
  if (!onWasmMemory) return tf.slice(w, [first, 0], [rows, w.shape[1]]);
  register();
  const attrs = { first, rows } as unknown as tf.NamedAttrMap;
  return tf.engine().runKernel(ROW_BLOCK_KERNEL, { w }, attrs) as tf.Tensor2D;
}

/** Whether the kernel runs on the current backend (tfjs wasm with its memory reachable, SIMD). */
export function fewRowsReady(): boolean {
  return (
    tf.getBackend() === 'wasm' &&
    rowsFunctionOf(tf.backend() as unknown as WasmBackendLike) !== null
  );
}

/** Whether `fewRowsLinear(x, w)` runs here: wasm with SIMD, float32, few rows, k in steps of 16. */
export function fewRowsApplies(x: tf.Tensor2D, w: tf.Tensor2D): boolean {
  const [n, k] = x.shape;
  if (n < 1 || n > FEW_ROWS_MAX || k < K_STEP || k % K_STEP !== 0 || w.shape[1] !== k) return false;
  return x.dtype === 'float32' && w.dtype === 'float32' && fewRowsReady();
}

/** x [n,k] · Wᵀ for W [m,k] (values only: the caller owns the gradient). */
export function fewRowsLinear(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  register();
  return tf.engine().runKernel(KERNEL_NAME, { x, w }, {}) as tf.Tensor2D;
}
