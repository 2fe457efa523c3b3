// A training run of collaborative GRPO, one step at a time. Pure engine code (no Node, no
// DOM): the CLI drives it in Node, the page's engine Worker in the browser.
//
// One step: draw tasks → Planner samples N plans per task, Coder M programs per plan →
// the sandbox runs them → rewards and group advantages per role → GRPO update of each
// trained role → metrics (TRL names, prefixed by role) and the step's sample groups.
// Same config (with its seed) on the same backend → the same curves; a snapshot restores
// weights, Adam state, frozen references, the task stream position and the step.

import * as tf from '@tensorflow/tfjs-core';
import { assignCredit, type RoleCredit } from '../agents/credit';
import { type EvaluationResult, evaluateSuites } from '../agents/evaluate';
import { judgePrograms } from '../agents/judge';
import { sampleRollouts, type TaskRollout } from '../agents/rollout';
import {
  BYTES_PER_MIB,
  disposeModel,
  type LoadedCheckpoint,
  loadCheckpoint,
  memoryBudgetBytes,
  saveCheckpoint,
} from '../model';
import {
  grpoLossOptions,
  type Role,
  resolveGrpoConfig,
  trainedRoles,
  usesPlanner,
} from '../rl/config';
import { buildStepMetrics, type RoleStepStats, roleMetric, TIMING_METRICS } from '../rl/metrics';
import { RoleTrainer, type RoleUpdate } from '../rl/trainer';
import { KvCacheSampler } from '../rollout/kvSampler';
import type { Sandbox } from '../sandbox/types';
import type { SuiteName, Task } from '../tasks';
import { DEFAULT_RUN_CONFIG } from './runConfig';
import {
  decodeTrainerState,
  encodeTrainerState,
  getCheckpoint,
  getJson,
  putCheckpoint,
  putJson,
} from './snapshotFiles';
import { policySequences, sampleGroups } from './stepSamples';
import { stepSeed, TaskStream } from './taskStream';
import type { EvalReport, RunConfig, RunSnapshot, SampleGroup, StepReport } from './types';

export type Suites = Partial<Record<SuiteName, Task[]>>;

export interface SessionDeps {
  /** Warm-start checkpoints; the session owns (and disposes) their models. */
  planner: LoadedCheckpoint;
  coder: LoadedCheckpoint;
  sandbox: Sandbox;
  suites?: Suites;
}

export interface RestoreDeps {
  sandbox: Sandbox;
  suites?: Suites;
}

/** run.json inside a snapshot. */
interface RunState {
  format: 1;
  step: number;
  taskPosition: number;
}

const PLANNER_SEED_STREAM = 1;
const CODER_SEED_STREAM = 2;

/** The tiny preset, core mode, every tier, seed 1 (DEFAULT_RUN_CONFIG), with overrides. */
export function defaultRunConfig(
  overrides: Partial<Omit<RunConfig, 'grpo'>> & { grpo?: Partial<RunConfig['grpo']> } = {},
): RunConfig {
  const { grpo, ...rest } = overrides;
  return {
    ...DEFAULT_RUN_CONFIG,
    tierMix: { ...DEFAULT_RUN_CONFIG.tierMix },
    ...rest,
    grpo: resolveGrpoConfig({ ...DEFAULT_RUN_CONFIG.grpo, ...grpo }),
  };
}

export class TrainingSession {
  private stepCount = 0;
  private readonly trainers = new Map<Role, RoleTrainer>();
  /** Bytes one micro-batch may hold: the run's override, else the backend's default. */
  private readonly budgetBytes: number;
  private activityValue = 'idle';
  /** Told each change of `activity` (the page's Worker says "evaluating…" with it). */
  onActivity: ((activity: string) => void) | null = null;

  private get activityText(): string {
    return this.activityValue;
  }

  private set activityText(next: string) {
    if (next === this.activityValue) return;
    this.activityValue = next;
    this.onActivity?.(next);
  }

  private constructor(
    readonly config: RunConfig,
    private readonly planner: LoadedCheckpoint,
    private readonly coder: LoadedCheckpoint,
    private readonly sandbox: Sandbox,
    private readonly suites: Suites,
    private readonly tasks: TaskStream,
  ) {
    if (planner.tokenizer.vocabSize !== coder.tokenizer.vocabSize) {
      throw new Error('planner and coder must share one tokenizer');
    }
    this.budgetBytes = memoryBudgetBytes(tf.getBackend(), config.memoryBudgetMiB);
    for (const role of trainedRoles(config.grpo.mode)) {
      const model = role === 'planner' ? planner.model : coder.model;
      this.trainers.set(
        role,
        new RoleTrainer(model, {
          learningRate: config.grpo.learningRate,
          temperature: config.grpo.temperature,
          numIterations: config.grpo.numIterations,
          maxGradNorm: config.grpo.maxGradNorm,
          loss: grpoLossOptions(config.grpo, role),
          padId: coder.tokenizer.padId,
          memoryBudgetBytes: this.budgetBytes,
        }),
      );
    }
  }

  static async create(config: RunConfig, deps: SessionDeps): Promise<TrainingSession> {
    const resolved = { ...config, grpo: resolveGrpoConfig(config.grpo) };
    return new TrainingSession(
      resolved,
      deps.planner,
      deps.coder,
      deps.sandbox,
      deps.suites ?? {},
      new TaskStream(resolved),
    );
  }

  static async restore(snapshot: RunSnapshot, deps: RestoreDeps): Promise<TrainingSession> {
    const state = getJson<RunState>(snapshot.files, 'run.json');
    const planner = loadCheckpoint(getCheckpoint(snapshot.files, 'planner'));
    const coder = loadCheckpoint(getCheckpoint(snapshot.files, 'coder'));
    const session = new TrainingSession(
      { ...snapshot.config, grpo: resolveGrpoConfig(snapshot.config.grpo) },
      planner,
      coder,
      deps.sandbox,
      deps.suites ?? {},
      new TaskStream(snapshot.config, state.taskPosition),
    );
    for (const [role, trainer] of session.trainers) {
      const bytes = snapshot.files[`${role}/trainer.safetensors`];
      if (!bytes) throw new Error(`snapshot has no ${role}/trainer.safetensors`);
      await trainer.importState(decodeTrainerState(bytes));
    }
    session.stepCount = state.step;
    return session;
  }

  get step(): number {
    return this.stepCount;
  }

  /** What the session is doing now, in words ("the Coder update (64 sequences)"), for errors. */
  get activity(): string {
    return this.activityText;
  }

  /** The micro-batch memory budget in force, in MiB. */
  get memoryBudgetMiB(): number {
    return this.budgetBytes / BYTES_PER_MIB;
  }

  /** Exactly one GRPO step; every `evalEvery` steps the report also carries eval/* metrics. */
  async trainStep(): Promise<StepReport> {
    const { grpo } = this.config;
    const started = now();
    const stepIndex = this.stepCount;
    const tasks = this.tasks.next(grpo.tasksPerStep);
    const withPlans = usesPlanner(grpo.mode);

    const rolloutStart = now();
    this.activityText = `sampling (${tasks.length} tasks)`;
    const rollouts = await this.rollout(tasks, stepIndex, 0);
    const rolloutSeconds = (now() - rolloutStart) / 1000;

    const sandboxStart = now();
    this.activityText = 'judging programs in the sandbox';
    const judged = await judgePrograms(
      this.sandbox,
      rollouts.flatMap((r) => r.programs.flat().map((p) => ({ task: r.task, completion: p.text }))),
    );
    const sandboxSeconds = (now() - sandboxStart) / 1000;

    const plansPerTask = withPlans ? grpo.plansPerTask : 1;
    const perTask = plansPerTask * grpo.programsPerPlan;
    const credit = assignCredit(
      rollouts.map((_, t) => judged.slice(t * perTask, (t + 1) * perTask).map((j) => j.outcome)),
      { plansPerTask, programsPerPlan: grpo.programsPerPlan, withPlans },
      grpo.rewardWeights,
      grpo.scaleRewards,
    );

    const updateStart = now();
    const updates = new Map<Role, RoleUpdate>();
    for (const [role, trainer] of this.trainers) {
      const sequences = policySequences(role, rollouts, credit);
      this.activityText = `the ${role === 'planner' ? 'Planner' : 'Coder'} update (${sequences.length} sequences)`;
      updates.set(role, await trainer.update(sequences));
    }
    const updateSeconds = (now() - updateStart) / 1000;

    this.stepCount++;
    const roleStats = (role: Role, roleCredit: RoleCredit | null): RoleStepStats | undefined => {
      if (!roleCredit) return undefined;
      const update = updates.get(role);
      return {
        rewards: roleCredit.rewards,
        advantages: roleCredit.advantages,
        ...(update
          ? {
              loss: update.metrics,
              gradNorm: update.gradNorm,
              updateSkipped: update.skipped.length > 0,
            }
          : {}),
      };
    };
    const metrics: Record<string, number> = buildStepMetrics({
      step: this.stepCount,
      planner: roleStats('planner', credit.planner),
      coder: roleStats('coder', credit.coder),
      timings: { stepSeconds: 0, rolloutSeconds, sandboxSeconds, updateSeconds },
    });
    // Nothing is cut silently: the share of plans and programs that hit their cap.
    const clipped = (completions: { finished: boolean }[]) =>
      completions.length === 0
        ? 0
        : completions.filter((c) => !c.finished).length / completions.length;
    if (withPlans) {
      metrics[roleMetric('planner', 'clippedRatio')] = clipped(
        rollouts.flatMap((r) => r.plans ?? []),
      );
    }
    metrics[roleMetric('coder', 'clippedRatio')] = clipped(
      rollouts.flatMap((r) => r.programs.flat()),
    );
    // How many micro-batches each update took under the memory budget (1: one pass).
    for (const [role, update] of updates) {
      metrics[`${role}/update/micro_batches`] = update.microBatches;
    }
    if (this.config.evalEvery > 0 && this.stepCount % this.config.evalEvery === 0) {
      this.activityText = 'the evaluation';
      Object.assign(metrics, (await this.evaluate()).metrics);
    }
    this.activityText = 'idle';
    metrics[TIMING_METRICS.step] = (now() - started) / 1000;
    const skippedUpdates = [...updates].flatMap(([role, update]) =>
      update.skipped.map((reason) => ({ role, reason })),
    );
    return {
      step: this.stepCount,
      metrics,
      groups: sampleGroups(this.stepCount, rollouts, judged, credit, grpo.programsPerPlan),
      skippedUpdates,
    };
  }

  /** Greedy pass@1 on the fixed suites (the first evalTasksPerTier tasks of each). */
  async evaluate(suites?: SuiteName[]): Promise<EvalReport> {
    const result = await this.evaluateDetailed(suites);
    return { step: this.stepCount, metrics: result.metrics };
  }

  /** As evaluate, with per-suite counts (for tables). */
  async evaluateDetailed(suites?: SuiteName[]): Promise<EvaluationResult> {
    const names = suites ?? (Object.keys(this.suites) as SuiteName[]);
    const chosen: Record<string, Task[]> = {};
    for (const name of names) {
      const tasks = this.suites[name];
      if (tasks) chosen[name] = tasks.slice(0, this.config.evalTasksPerTier);
    }
    return evaluateSuites(
      this.agents(),
      chosen,
      {
        maxPlanTokens: this.config.grpo.maxPlanTokens,
        maxProgramTokens: this.config.grpo.maxProgramTokens,
      },
      this.sandbox,
    );
  }

  /** Samplers over the current weights; no Planner in `single` mode. */
  private agents() {
    return {
      tokenizer: this.coder.tokenizer,
      planner: usesPlanner(this.config.grpo.mode)
        ? new KvCacheSampler(this.planner.model, this.budgetBytes)
        : null,
      coder: new KvCacheSampler(this.coder.model, this.budgetBytes),
    };
  }

  /** The Planner's N plans and the Coder's M programs per plan, seeded by step. */
  private rollout(tasks: Task[], stepIndex: number, seedOffset: number): Promise<TaskRollout[]> {
    const { grpo } = this.config;
    return sampleRollouts(tasks, this.agents(), {
      plansPerTask: grpo.plansPerTask,
      programsPerPlan: grpo.programsPerPlan,
      maxPlanTokens: grpo.maxPlanTokens,
      maxProgramTokens: grpo.maxProgramTokens,
      temperature: grpo.temperature,
      topK: this.config.topK,
      plannerSeed: stepSeed(grpo.seed, stepIndex, PLANNER_SEED_STREAM) + seedOffset,
      coderSeed: stepSeed(grpo.seed, stepIndex, CODER_SEED_STREAM) + seedOffset,
    });
  }

  /**
   * What the models do with one task right now: N plans × M programs, judged and credited
   * as in a step, with no update (the page's "Your own task"). Seeded by the step reached.
   */
  async sampleGroup(task: Task): Promise<SampleGroup> {
    const { grpo } = this.config;
    const withPlans = usesPlanner(grpo.mode);
    // Its own seeds (offset), so asking never replays the next training step's samples.
    const rollouts = await this.rollout([task], this.stepCount, 7919);
    const judged = await judgePrograms(
      this.sandbox,
      rollouts.flatMap((r) => r.programs.flat().map((p) => ({ task: r.task, completion: p.text }))),
    );
    const plansPerTask = withPlans ? grpo.plansPerTask : 1;
    const credit = assignCredit(
      [judged.map((j) => j.outcome)],
      { plansPerTask, programsPerPlan: grpo.programsPerPlan, withPlans },
      grpo.rewardWeights,
      grpo.scaleRewards,
    );
    const [group] = sampleGroups(this.stepCount, rollouts, judged, credit, grpo.programsPerPlan);
    if (!group) throw new Error('sampling produced no group');
    return group;
  }

  async snapshot(): Promise<RunSnapshot> {
    const files: RunSnapshot['files'] = {};
    const lab = {
      grpoStep: this.stepCount,
      mode: this.config.grpo.mode,
      seed: this.config.grpo.seed,
    };
    putCheckpoint(
      files,
      'planner',
      await saveCheckpoint(this.planner.model, this.planner.tokenizer, lab),
    );
    putCheckpoint(
      files,
      'coder',
      await saveCheckpoint(this.coder.model, this.coder.tokenizer, lab),
    );
    for (const [role, trainer] of this.trainers) {
      files[`${role}/trainer.safetensors`] = encodeTrainerState(await trainer.exportState());
    }
    const state: RunState = { format: 1, step: this.stepCount, taskPosition: this.tasks.position };
    putJson(files, 'run.json', state);
    return { config: this.config, step: this.stepCount, files };
  }

  dispose(): void {
    for (const trainer of this.trainers.values()) trainer.dispose();
    this.trainers.clear();
    disposeModel(this.planner.model);
    disposeModel(this.coder.model);
  }
}

function now(): number {
  return performance.now();
}
