// The registry of benchmark sections, in the order they print. Each lives beside its code.
import { grpoBench } from '../engine/bench';
import { memoryBench } from '../engine/memoryBench';
import { kernelsBench } from '../gpu/kernels/bench';
import { modelBench } from '../model/bench';
import { sandboxBench } from '../sandbox/bench';
import { tasksBench } from '../tasks/bench';
import { chartsBench } from '../ui/charts/bench';
import type { BenchSection } from './benchTable';

export const benchSections: Record<string, BenchSection> = {
  tasks: tasksBench,
  charts: chartsBench,
  models: modelBench,
  sandbox: sandboxBench,
  grpo: grpoBench,
  memory: memoryBench,
  kernels: kernelsBench,
};
