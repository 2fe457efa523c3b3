// Frozen roles, on real tiny models, the real QuickJS sandbox and tfjs (wasm): in frozen-coder
// mode the Coder's weights stay bit for bit while the Planner's move; with the alternating
// schedule (K = 2) steps 1–2 move only the Planner and steps 3–4 only the Coder.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRunConfig, TrainingSession } from '../../src/engine/session';
import type { RunConfig } from '../../src/engine/types';
import { initBackend } from '../../src/gpu/backend';
import { type CheckpointFiles, type LoadedCheckpoint, readValues } from '../../src/model';
import type { Sandbox } from '../../src/sandbox';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import { cachedQuickCoder, cachedQuickPlanner, FAMILIES, loadCheckpoint } from './engine-fixtures';

let sandbox: Sandbox;
let coderFiles: CheckpointFiles;
let plannerFiles: CheckpointFiles;

function testConfig(overrides: Partial<RunConfig['grpo']>): RunConfig {
  return defaultRunConfig({
    tierMix: { L1: 1 },
    taskFamilies: FAMILIES,
    evalEvery: 0,
    grpo: {
      tasksPerStep: 2,
      plansPerTask: 4,
      programsPerPlan: 2,
      maxPlanTokens: 40,
      maxProgramTokens: 56,
      learningRate: 3e-4,
      seed: 7,
      ...overrides,
    },
  });
}

type Weights = Map<string, Float32Array>;
const weightsOf = (agent: LoadedCheckpoint): Promise<Weights> => readValues(agent.model.params);
const same = (a: Weights, b: Weights) =>
  [...a].every(([name, values]) => {
    const other = b.get(name)!;
    return values.length === other.length && values.every((v, i) => Object.is(v, other[i]));
  });

async function session(config: RunConfig) {
  const planner = loadCheckpoint(plannerFiles);
  const coder = loadCheckpoint(coderFiles);
  const run = await TrainingSession.create(config, { planner, coder, sandbox });
  return { run, planner, coder };
}

beforeAll(async () => {
  await initBackend('wasm');
  sandbox = await createSandbox({ size: 1 });
  coderFiles = await cachedQuickCoder(300);
  plannerFiles = await cachedQuickPlanner(150);
}, 1_800_000); // the quick roles' SFT when not cached yet (minutes; more on a busy machine)

afterAll(async () => {
  await sandbox?.close();
});

describe('frozen roles', () => {
  it('frozen-coder: the Planner learns, the Coder’s weights stay bit for bit', async () => {
    const { run, planner, coder } = await session(testConfig({ mode: 'frozen-coder' }));
    const plannerBefore = await weightsOf(planner);
    const coderBefore = await weightsOf(coder);
    const reports = [await run.trainStep(), await run.trainStep()];
    expect(same(await weightsOf(coder), coderBefore)).toBe(true);
    expect(same(await weightsOf(planner), plannerBefore)).toBe(false);
    for (const report of reports) {
      // The Coder is still credited (its reward is what pays the plans), never updated.
      expect(report.metrics['coder/reward']).toBeTypeOf('number');
      expect(report.metrics['coder/update/micro_batches']).toBeUndefined();
      expect(report.metrics['planner/update/micro_batches']).toBeGreaterThan(0);
    }
    run.dispose();
  }, 300_000);

  it('alternating, K = 2: steps 1–2 move only the Planner, steps 3–4 only the Coder', async () => {
    const { run, planner, coder } = await session(
      testConfig({ mode: 'core', schedule: 'alternating', stageSteps: 2 }),
    );
    const at = async () => ({ planner: await weightsOf(planner), coder: await weightsOf(coder) });
    const start = await at();
    await run.trainStep();
    await run.trainStep();
    const afterPlannerStage = await at();
    expect(same(afterPlannerStage.coder, start.coder)).toBe(true);
    expect(same(afterPlannerStage.planner, start.planner)).toBe(false);
    const third = await run.trainStep();
    await run.trainStep();
    const afterCoderStage = await at();
    expect(same(afterCoderStage.planner, afterPlannerStage.planner)).toBe(true);
    expect(same(afterCoderStage.coder, afterPlannerStage.coder)).toBe(false);
    expect(third.metrics['planner/update/micro_batches']).toBeUndefined();
    expect(third.metrics['coder/update/micro_batches']).toBeGreaterThan(0);
    run.dispose();
  }, 300_000);
});
