// The training session with every agent (retriever,planner,coder,debugger) on real tiny
// models, the real QuickJS sandbox and real tfjs (wasm): each agent's metrics and samples,
// determinism, and a restored snapshot continuing exactly like the straight run (the
// Debugger's and the Retriever's weights and optimizer state included).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import type { RunConfig, StepReport } from '../../src/engine/types';
import { initBackend } from '../../src/gpu/backend';
import type { CheckpointFiles } from '../../src/model';
import { trainedRoles } from '../../src/rl/config';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import {
  cachedQuickCoder,
  cachedQuickPlanner,
  FAMILIES,
  familyTasks,
  loadCheckpoint,
} from './engine-fixtures';

let sandbox: Sandbox;
let coderFiles: CheckpointFiles;
let plannerFiles: CheckpointFiles;
const suites = { L1: familyTasks(4, 9, 'validation') };

function config(): RunConfig {
  return defaultRunConfig({
    tierMix: { L1: 1 },
    taskFamilies: FAMILIES,
    evalEvery: 0,
    evalTasksPerTier: 4,
    grpo: {
      agents: 'retriever,planner,coder,debugger',
      tasksPerStep: 2,
      plansPerTask: 2,
      programsPerPlan: 2,
      repairsPerProgram: 2,
      repairedProgramsPerStep: 2,
      retrievalCandidates: 2,
      maxPlanTokens: 40,
      maxProgramTokens: 48,
      learningRate: 3e-4,
      // β > 0 (the default is 0) so every agent's KL to its reference is measured and snapshotted.
      beta: 0.04,
      seed: 5,
    },
  });
}

const session = () =>
  TrainingSession.create(config(), {
    planner: loadCheckpoint(plannerFiles),
    coder: loadCheckpoint(coderFiles),
    sandbox,
    suites,
  });

const withoutTimings = (metrics: Record<string, number>) =>
  Object.fromEntries(Object.entries(metrics).filter(([key]) => !key.startsWith('step_time')));

beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
  coderFiles = await cachedQuickCoder(300);
  plannerFiles = await cachedQuickPlanner(150);
}, 600_000);

afterAll(async () => {
  await sandbox?.close();
});

describe('TrainingSession with all four agents', () => {
  it('trains every agent, is deterministic, and resumes exactly', async () => {
    expect(trainedRoles('core', config().grpo)).toEqual([
      'planner',
      'coder',
      'debugger',
      'retriever',
    ]);
    const straight = await session();
    const reports: StepReport[] = [await straight.trainStep(), await straight.trainStep()];
    straight.dispose();

    const first = await session();
    const firstReport = await first.trainStep();
    const snapshot = await first.snapshot();
    first.dispose();
    expect(snapshot.files['debugger/model.safetensors']).toBeDefined();
    expect(snapshot.files['retriever/trainer.safetensors']).toBeDefined();
    const resumed = await TrainingSession.restore(snapshot, { sandbox, suites });
    const secondReport = await resumed.trainStep();
    // The evaluation runs the whole chain too: one repair round after the greedy programs.
    const evaluation = await resumed.evaluate();
    resumed.dispose();

    [firstReport, secondReport].forEach((report, i) => {
      expect(withoutTimings(report.metrics)).toEqual(withoutTimings(reports[i]!.metrics));
      expect(report.groups).toEqual(reports[i]!.groups);
    });
    const metrics = reports[0]!.metrics;
    for (const name of [
      'retriever/reward',
      'retriever/kl',
      'retriever/entropy',
      'debugger/programs',
    ]) {
      expect(metrics[name], name).toBeTypeOf('number');
    }
    const plans = reports[0]!.groups.flatMap((g) => g.plans);
    expect(plans.every((p) => p.retrieval?.candidates.length === 2)).toBe(true);
    if (metrics['debugger/programs']! > 0) {
      expect(metrics['debugger/reward']).toBeTypeOf('number');
      const repaired = plans.flatMap((p) => p.programs).filter((p) => p.repairs);
      expect(repaired).toHaveLength(metrics['debugger/programs']!);
      expect(repaired.every((p) => p.repairs!.length === 2 && p.report)).toBe(true);
    }
    expect(evaluation.metrics['eval/pass@1_repair']).toBeGreaterThanOrEqual(
      evaluation.metrics['eval/pass@1']!,
    );
  }, 600_000);
});
