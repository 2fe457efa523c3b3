// The registry of benchmark sections, in the order they print. Benches sit above every layer
// (they import src/ downward; nothing in src/ imports them).

import { chartsBench } from './charts/charts';
import { gpuReportBench } from './gpuReport';
import { grpoBench } from './grpo';
import { kernelsBench } from './kernels';
import { llamaBench } from './llama';
import { llamaLoraBench } from './llamaLora';
import { llamaStepBench } from './llamaStep';
import { memoryBench } from './memory';
import { modelBench } from './models';
import { pageBench } from './page';
import { peersBench } from './peers';
import { rewardServerBench } from './rewardServer';
import { sandboxBench } from './sandbox';
import type { BenchSection } from './table';
import { tasksBench } from './tasks';
import { tfjsOpsBench } from './tfjsOps';
import { webgpuBench } from './webgpu';

export const benchSections: Record<string, BenchSection> = {
  tasks: tasksBench,
  charts: chartsBench,
  models: modelBench,
  sandbox: sandboxBench,
  'reward-server': rewardServerBench,
  grpo: grpoBench,
  'tfjs-ops': tfjsOpsBench,
  memory: memoryBench,
  kernels: kernelsBench,
  llama: llamaBench,
  'llama-lora': llamaLoraBench,
  'llama-step': llamaStepBench,
  webgpu: webgpuBench,
  'gpu-report': gpuReportBench,
  page: pageBench,
  peers: peersBench,
};
