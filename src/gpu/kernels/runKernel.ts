// Create buffers, dispatch a compute entry point, read results back. Bindings follow one
// convention: inputs at 0..k−1, outputs next, the uniform block last (see the .wgsl files).

import { loadShader } from './loadShader';

export interface KernelSpec {
  shader: string;
  entryPoint: string;
  inputs: (Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer>)[];
  /** Number of f32 elements in each output. */
  outputLengths: number[];
  /** The uniform block's bytes, in the shader's struct layout. */
  uniforms: ArrayBuffer;
  workgroups: [number, number?, number?];
}

/** Buffers bound to a pipeline, ready to dispatch many times (benchmarks) and read once. */
export interface PreparedKernel {
  /** Encode `times` dispatches in one submission and wait until the GPU has finished them. */
  dispatch(times?: number): Promise<void>;
  read(): Promise<Float32Array[]>;
  destroy(): void;
}

const pipelines = new WeakMap<GPUDevice, Map<string, Promise<GPUComputePipeline>>>();

function pipelineFor(device: GPUDevice, shader: string, entryPoint: string) {
  let byName = pipelines.get(device);
  if (!byName) {
    byName = new Map();
    pipelines.set(device, byName);
  }
  const key = `${shader}#${entryPoint}`;
  let pipeline = byName.get(key);
  if (!pipeline) {
    pipeline = loadShader(shader).then((code) =>
      device.createComputePipelineAsync({
        layout: 'auto',
        compute: { module: device.createShaderModule({ code }), entryPoint },
      }),
    );
    byName.set(key, pipeline);
  }
  return pipeline;
}

function storageWith(
  device: GPUDevice,
  data: Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer>,
): GPUBuffer {
  // WebGPU rejects zero-sized bindings; 4 bytes is the smallest legal buffer.
  const buffer = device.createBuffer({
    size: Math.max(data.byteLength, 4),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

export async function prepareKernel(device: GPUDevice, spec: KernelSpec): Promise<PreparedKernel> {
  const pipeline = await pipelineFor(device, spec.shader, spec.entryPoint);
  const inputs = spec.inputs.map((data) => storageWith(device, data));
  const outputs = spec.outputLengths.map((length) =>
    device.createBuffer({
      size: Math.max(length * 4, 4),
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
    }),
  );
  const uniforms = device.createBuffer({
    size: Math.max(spec.uniforms.byteLength, 16),
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(uniforms, 0, spec.uniforms);
  const all = [...inputs, ...outputs, uniforms];
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: all.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const [x, y = 1, z = 1] = spec.workgroups;
  return {
    async dispatch(times = 1) {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      for (let i = 0; i < times; i++) pass.dispatchWorkgroups(x, y, z);
      pass.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    },
    async read() {
      const encoder = device.createCommandEncoder();
      const staging = outputs.map((buffer) => {
        const copy = device.createBuffer({
          size: buffer.size,
          usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
        });
        encoder.copyBufferToBuffer(buffer, 0, copy, 0, buffer.size);
        return copy;
      });
      device.queue.submit([encoder.finish()]);
      return Promise.all(
        staging.map(async (copy, i) => {
          await copy.mapAsync(GPUMapMode.READ);
          const values = new Float32Array(
            copy.getMappedRange().slice(0, (spec.outputLengths[i] ?? 0) * 4),
          );
          copy.unmap();
          copy.destroy();
          return values;
        }),
      );
    },
    destroy() {
      for (const buffer of all) buffer.destroy();
    },
  };
}

/** One dispatch, read back, buffers freed. */
export async function runKernel(device: GPUDevice, spec: KernelSpec): Promise<Float32Array[]> {
  const kernel = await prepareKernel(device, spec);
  try {
    await kernel.dispatch();
    return await kernel.read();
  } finally {
    kernel.destroy();
  }
}

/** Splits a workgroup count over x and y: one dimension holds at most 65535. */
export function grid2d(count: number, maxPerDimension = 65535): [number, number] {
  const x = Math.max(1, Math.min(count, maxPerDimension));
  return [x, Math.max(1, Math.ceil(count / x))];
}
