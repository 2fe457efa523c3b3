// The engine's recording layer: pipelines by (shader, entry point, binding kinds), buffers,
// and Programs — lists of dispatches whose bind groups and uniforms are built once and then
// replayed into a command encoder as often as needed (a decode step K times per submission,
// a training step once). Dispatches and submissions are counted, for the bench.
//
// Bindings follow the convention of runKernel.ts: storage buffers in order, the uniform block
// last. Each binding is declared with its kind, 'r' (read-only storage), 'w' (read-write
// storage) or 'u' (uniform), so pipelines use explicit layouts and an entry point may leave a
// binding unused.

import { loadShader } from '../kernels/loadShader';

export type BindingKind = 'r' | 'w';

/** A storage binding: a whole buffer, or a range of one (offset a multiple of 256 bytes). */
export interface Slice {
  buffer: GPUBuffer;
  /** In f32 elements. */
  offset?: number;
  /** In f32 elements; default: to the end of the buffer. */
  length?: number;
}

export type Bindable = GPUBuffer | Slice;

export function asSlice(b: Bindable): Slice {
  return 'buffer' in b ? b : { buffer: b };
}

export interface DispatchSpec {
  shader: string;
  entry: string;
  /** Storage bindings at 0..n−1, with their kinds. */
  bindings: [BindingKind, Bindable][];
  /** The uniform block (bound at n), in the shader's struct layout. */
  uniforms: ArrayBuffer;
  workgroups: [number, number?, number?];
  /** The uniform block's binding: 7 in the engine's shaders (after at most 7 storage buffers). */
  uniformBinding?: number;
  /** A uniform buffer the caller rewrites between submissions (then `uniforms` is ignored). */
  uniformBuffer?: GPUBuffer;
  /** Pipeline-overridable constants (WGSL `override`), e.g. a workgroup size. */
  constants?: Record<string, number>;
  /** For counting and debugging. */
  label?: string;
}

interface Dispatch {
  pipeline: GPUComputePipeline;
  bindGroup: GPUBindGroup;
  workgroups: [number, number, number];
  label: string;
}

/** Recorded dispatches, replayed into one compute pass per encode(). */
export class Program {
  constructor(
    readonly dispatches: Dispatch[],
    /** The uniform buffers program() made for it (freed by GpuRuntime.destroyProgram). */
    readonly uniforms: GPUBuffer[] = [],
  ) {}

  get size(): number {
    return this.dispatches.length;
  }

  encode(pass: GPUComputePassEncoder): void {
    for (const d of this.dispatches) {
      pass.setPipeline(d.pipeline);
      pass.setBindGroup(0, d.bindGroup);
      pass.dispatchWorkgroups(d.workgroups[0], d.workgroups[1], d.workgroups[2]);
    }
  }
}

export interface Counters {
  dispatches: number;
  submissions: number;
  readbacks: number;
  /** Milliseconds spent creating shader modules and pipelines (compiling; once per pipeline). */
  compileMs: number;
}

/** Uniform-block builder: u32 and f32 words in struct order, padded to 16 bytes. */
export function uniforms(words: (['u', number] | ['f', number])[]): ArrayBuffer {
  const size = Math.max(16, Math.ceil((words.length * 4) / 16) * 16);
  const buffer = new ArrayBuffer(size);
  const u = new Uint32Array(buffer);
  const f = new Float32Array(buffer);
  words.forEach(([kind, value], i) => {
    if (kind === 'u') u[i] = value >>> 0;
    else f[i] = value;
  });
  return buffer;
}

/** Shorthand: every word u32. */
export const u32s = (...values: number[]) => uniforms(values.map((v) => ['u', v] as ['u', number]));

export interface Dummies {
  r: GPUBuffer;
  w: GPUBuffer;
}

export const ALIGN_FLOATS = 64; // 256 bytes: WebGPU's minStorageBufferOffsetAlignment default

export class GpuRuntime {
  readonly counters: Counters = { dispatches: 0, submissions: 0, readbacks: 0, compileMs: 0 };
  private readonly layouts = new Map<string, GPUBindGroupLayout>();
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private readonly modules = new Map<string, GPUShaderModule>();
  private readonly sources = new Map<string, string>();
  /** Buffers this runtime made (destroyed by destroy()). */
  private readonly owned = new Set<GPUBuffer>();
  /** Stand-ins for unused bindings: one read-only, one writable (a buffer may not be both). */
  readonly dummy: Dummies;

  /** Set when the device is lost or destroyed: every read after that throws. */
  lostReason: string | null = null;

  constructor(readonly device: GPUDevice) {
    void device.lost.then((info) => {
      this.lostReason = info.message || info.reason || 'lost';
    });
    this.dummy = {
      r: this.buffer(ALIGN_FLOATS, 'dummy-r'),
      w: this.buffer(ALIGN_FLOATS, 'dummy-w'),
    };
  }

  /** Loads the WGSL sources (async) so that program building is synchronous. */
  async load(shaders: string[]): Promise<void> {
    for (const shader of shaders)
      if (!this.sources.has(shader)) this.sources.set(shader, await loadShader(shader));
  }

  /** Replaces a loaded shader's source (the self-check's test hook); its pipelines are rebuilt. */
  replaceSource(shader: string, code: string): void {
    this.sources.set(shader, code);
    this.modules.delete(shader);
    for (const key of [...this.pipelines.keys()])
      if (key.startsWith(`${shader}#`)) this.pipelines.delete(key);
  }

  buffer(floats: number, label = '', extraUsage = 0): GPUBuffer {
    const buffer = this.device.createBuffer({
      label,
      size: Math.max(16, Math.ceil((floats * 4) / 16) * 16),
      usage:
        GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC | extraUsage,
    });
    this.owned.add(buffer);
    this.collecting?.push(buffer);
    return buffer;
  }

  private collecting: GPUBuffer[] | null = null;

  /** Runs fn and returns, with its value, every buffer made meanwhile (to free them together). */
  collect<T>(fn: () => T): { value: T; buffers: GPUBuffer[] } {
    const outer = this.collecting;
    const buffers: GPUBuffer[] = [];
    this.collecting = buffers;
    try {
      return { value: fn(), buffers };
    } finally {
      this.collecting = outer;
      outer?.push(...buffers);
    }
  }

  /** Buffers this runtime holds now (a run's count must stay flat). */
  get bufferCount(): number {
    return this.owned.size;
  }

  destroyProgram(program: Program): void {
    for (const buffer of program.uniforms) this.free(buffer);
  }

  write(target: Bindable, data: Float32Array | Uint32Array | Int32Array, offsetFloats = 0) {
    const { buffer, offset = 0 } = asSlice(target);
    this.device.queue.writeBuffer(
      buffer,
      (offset + offsetFloats) * 4,
      data.buffer,
      data.byteOffset,
      data.byteLength,
    );
  }

  uniformBuffer(bytes: number): GPUBuffer {
    const uniform = this.device.createBuffer({
      size: Math.max(16, Math.ceil(bytes / 16) * 16),
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    this.owned.add(uniform);
    this.collecting?.push(uniform);
    return uniform;
  }

  free(buffer: GPUBuffer): void {
    if (this.owned.delete(buffer)) buffer.destroy();
  }

  private layout(kinds: string): GPUBindGroupLayout {
    let layout = this.layouts.get(kinds);
    if (!layout) {
      layout = this.device.createBindGroupLayout({
        entries: [...kinds].flatMap((kind, binding) =>
          kind === '_'
            ? []
            : [
                {
                  binding,
                  visibility: GPUShaderStage.COMPUTE,
                  buffer: {
                    type: (kind === 'u'
                      ? 'uniform'
                      : kind === 'r'
                        ? 'read-only-storage'
                        : 'storage') as GPUBufferBindingType,
                  },
                },
              ],
        ),
      });
      this.layouts.set(kinds, layout);
    }
    return layout;
  }

  private pipeline(
    shader: string,
    entry: string,
    kinds: string,
    constants?: Record<string, number>,
  ): GPUComputePipeline {
    const key = `${shader}#${entry}#${kinds}#${JSON.stringify(constants ?? {})}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      const compileStart = performance.now();
      let module = this.modules.get(shader);
      if (!module) {
        const code = this.sources.get(shader);
        if (code === undefined) throw new Error(`shader ${shader} was not loaded`);
        module = this.device.createShaderModule({ label: shader, code });
        this.modules.set(shader, module);
      }
      pipeline = this.device.createComputePipeline({
        label: key,
        layout: this.device.createPipelineLayout({ bindGroupLayouts: [this.layout(kinds)] }),
        compute: { module, entryPoint: entry, ...(constants ? { constants } : {}) },
      });
      this.pipelines.set(key, pipeline);
      this.counters.compileMs += performance.now() - compileStart;
    }
    return pipeline;
  }

  /** Builds the dispatches once (bind groups, uniform buffers); replay with run()/encode(). */
  program(specs: DispatchSpec[]): Program {
    const made: GPUBuffer[] = [];
    const dispatches = specs.map((spec) => {
      const at = spec.uniformBinding ?? 7;
      if (spec.bindings.length > at) throw new Error(`${spec.entry}: too many bindings`);
      const kinds = `${spec.bindings.map(([k]) => k).join('')}${'_'.repeat(at - spec.bindings.length)}u`;
      const pipeline = this.pipeline(spec.shader, spec.entry, kinds, spec.constants);
      let uniform = spec.uniformBuffer;
      if (!uniform) {
        uniform = this.uniformBuffer(spec.uniforms.byteLength);
        made.push(uniform);
        this.device.queue.writeBuffer(uniform, 0, spec.uniforms);
      }
      const entries: GPUBindGroupEntry[] = spec.bindings.map(([, b], binding) => {
        const s = asSlice(b);
        const offset = (s.offset ?? 0) * 4;
        const size = s.length === undefined ? s.buffer.size - offset : Math.max(4, s.length * 4);
        return { binding, resource: { buffer: s.buffer, offset, size } };
      });
      entries.push({ binding: at, resource: { buffer: uniform } });
      const [x, y = 1, z = 1] = spec.workgroups;
      if (x > 65535 || y > 65535 || z > 65535)
        throw new Error(`${spec.label ?? spec.entry}: ${x}×${y}×${z} workgroups is too many`);
      return {
        pipeline,
        bindGroup: this.device.createBindGroup({ layout: this.layout(kinds), entries }),
        workgroups: [Math.max(1, x), y, z] as [number, number, number],
        label: spec.label ?? `${spec.shader}#${spec.entry}`,
      };
    });
    return new Program(dispatches, made);
  }

  /** Encodes programs (each `times` times) into one command buffer and submits it. */
  submit(parts: (Program | ((encoder: GPUCommandEncoder) => void))[], times = 1): void {
    const encoder = this.device.createCommandEncoder();
    for (let i = 0; i < times; i++) {
      let pass: GPUComputePassEncoder | null = null;
      for (const part of parts) {
        if (part instanceof Program) {
          pass ??= encoder.beginComputePass();
          part.encode(pass);
          this.counters.dispatches += part.size;
        } else {
          pass?.end();
          pass = null;
          part(encoder);
        }
      }
      pass?.end();
    }
    this.device.queue.submit([encoder.finish()]);
    this.counters.submissions++;
  }

  /** Copies slices to staging buffers (in one submission) and maps them. */
  async read(slices: Bindable[]): Promise<Float32Array[]> {
    const encoder = this.device.createCommandEncoder();
    const staged = slices.map((s) => {
      const { buffer, offset = 0, length } = asSlice(s);
      const bytes = length === undefined ? buffer.size - offset * 4 : length * 4;
      const size = Math.max(4, Math.ceil(bytes / 4) * 4);
      const staging = this.device.createBuffer({
        size,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      });
      encoder.copyBufferToBuffer(buffer, offset * 4, staging, 0, size);
      return { staging, bytes };
    });
    this.device.queue.submit([encoder.finish()]);
    this.counters.submissions++;
    this.counters.readbacks++;
    const out = await Promise.all(
      staged.map(async ({ staging, bytes }) => {
        await staging.mapAsync(GPUMapMode.READ);
        const out = new Float32Array(staging.getMappedRange().slice(0, bytes));
        staging.unmap();
        staging.destroy();
        return out;
      }),
    );
    // A destroyed device may still answer a map with zeros: what it returns after being lost
    // must not be used (device.lost settles a task later, hence the tick).
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (this.lostReason) throw new Error(`the GPU device was lost (${this.lostReason})`);
    return out;
  }

  async readU32(slice: Bindable): Promise<Uint32Array> {
    const [f] = await this.read([slice]);
    return new Uint32Array((f as Float32Array).buffer);
  }

  destroy(): void {
    for (const buffer of this.owned) buffer.destroy();
    this.owned.clear();
  }
}
