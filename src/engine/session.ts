// A training run of collaborative GRPO, one step at a time. Pure engine code (no Node, no
// DOM): the CLI drives it in Node, the page's engine Worker in the browser.
//
// One step: draw tasks → Planner samples N plans per task, Coder M programs per plan →
// the sandbox runs them → rewards and group advantages per role → GRPO update of each
// trained role → metrics (TRL names, prefixed by role) and the step's sample groups.
// Same config (with its seed) on the same backend → the same curves; a snapshot restores
// weights, Adam state, frozen references, the task stream position and the step.

import * as tf from '@tensorflow/tfjs-core';
import { chatPrompts } from '../agents/chatPrompts';
import { assignCredit, type RoleCredit, type StepCredit } from '../agents/credit';
import {
  type DebuggerStep,
  debuggerSequences,
  fixedShare,
  postRepairCredit,
  runDebugger,
} from '../agents/debugger';
import { type EvalAgents, type EvaluationResult, evaluateSuites } from '../agents/evaluate';
import { type JudgedProgram, judgePrograms } from '../agents/judge';
import { droppedPlans } from '../agents/planDropout';
import {
  buildLibrary,
  type ExampleLibrary,
  type RetrievalStep,
  retrieve,
  retrieverCredit,
  retrieverSequences,
} from '../agents/retriever';
import { sampleRollouts, type TaskRollout } from '../agents/rollout';
import {
  BYTES_PER_MIB,
  disposeModel,
  type LoadedCheckpoint,
  loadCheckpoint,
  memoryBudgetBytes,
  saveCheckpoint,
} from '../model';
import { disposeHubModel } from '../model/families/hubModel';
import type { TrainableModel } from '../model/trainableModel';
import {
  grpoLossOptions,
  hasAgent,
  type Role,
  resolveGrpoConfig,
  trainedRoles,
  usesPlanner,
} from '../rl/config';
import {
  AGENT_METRICS,
  buildStepMetrics,
  type RoleStepStats,
  roleMetric,
  TIMING_METRICS,
} from '../rl/metrics';
import { roleTrainsAt } from '../rl/schedule';
import { RoleTrainer, type RoleUpdate } from '../rl/trainer';
import { KvCacheSampler } from '../rollout/kvSampler';
import type { Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';
import type { TaskSetSplits } from '../tasks/mbxp/taskSet';
import {
  type BaseModel,
  type BaseRoles,
  createBaseRoles,
  disposeBaseRoles,
  putBaseAdapters,
  restoreBaseRoles,
} from './baseRoles';
import { attachAdapters, putAdapters, restoreAdapters } from './loraRoles';
import { DEFAULT_RUN_CONFIG } from './runConfig';
import {
  decodeTrainerState,
  encodeTrainerState,
  getCheckpoint,
  getJson,
  putCheckpoint,
  putJson,
} from './snapshotFiles';
import {
  attachAgentSamples,
  policySequences,
  sampleGroups,
  withRenderedPrompts,
} from './stepSamples';
import { type EvalSuiteName, planDropoutOf, runTasks, type Suites } from './taskSets';
import { stepSeed, TaskStream } from './taskStream';
import type { EvalReport, RunConfig, RunSnapshot, SampleGroup, StepReport } from './types';

export type { Suites } from './taskSets';

export interface SessionDeps {
  /**
   * Warm-start checkpoints; the session owns (and disposes) their models. Absent with `base`
   * (then every role is an adapter over the base).
   */
  planner?: LoadedCheckpoint;
  coder?: LoadedCheckpoint;
  /** A pretrained base (config.base): the session owns it; engine/baseRoles.ts. */
  base?: BaseModel;
  /**
   * The Debugger's and the Retriever's warm starts, for topologies with them. Absent: the
   * Debugger starts as a copy of the Coder, the Retriever as a copy of the Planner.
   */
  debugger?: LoadedCheckpoint;
  retriever?: LoadedCheckpoint;
  sandbox: Sandbox;
  suites?: Suites;
  /** MBXP's splits, for a run with taskSet mbxp (engine/taskSets.ts). */
  mbxp?: TaskSetSplits;
  /** The examples world's suites, for a run with taskSet examples. */
  examples?: Suites;
}

/** The agents a topology adds to Planner → Coder (their models; the Retriever's library). */
interface ExtraAgents {
  debugger?: LoadedCheckpoint;
  retriever?: LoadedCheckpoint;
  library?: ExampleLibrary;
}

/** What one pass of the chain produced (a training step's samples, or the page's own task). */
interface ChainResult {
  rollouts: TaskRollout[];
  judged: JudgedProgram[];
  credit: StepCredit;
  retrieval: RetrievalStep | null;
  retrieverCredit: RoleCredit | null;
  debug: DebuggerStep | null;
  rolloutSeconds: number;
  sandboxSeconds: number;
}

export interface RestoreDeps {
  /** The run's base, loaded again from config.base (a run over a base saves only its adapters). */
  base?: BaseModel;
  sandbox: Sandbox;
  suites?: Suites;
  mbxp?: TaskSetSplits;
  examples?: Suites;
}

/** run.json inside a snapshot. */
interface RunState {
  format: 1;
  step: number;
  taskPosition: number;
}

const PLANNER_SEED_STREAM = 1;
const CODER_SEED_STREAM = 2;
const DEBUGGER_SEED_STREAM = 3;
const RETRIEVER_SEED_STREAM = 4;
const PLAN_DROPOUT_SEED_STREAM = 5;

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

  /** The lab's warm starts (absent over a base); see `lab`. */
  private readonly labModels: { planner: LoadedCheckpoint; coder: LoadedCheckpoint } | null;

  private constructor(
    readonly config: RunConfig,
    models: { planner: LoadedCheckpoint; coder: LoadedCheckpoint } | BaseRoles,
    private readonly sandbox: Sandbox,
    private readonly suites: Suites,
    private readonly tasks: TaskStream,
    private readonly extra: ExtraAgents = {},
  ) {
    this.baseRoles = 'roles' in models ? models : null;
    this.labModels = 'roles' in models ? null : models;
    if (this.labModels) {
      const { planner, coder } = this.labModels;
      for (const agent of [coder, extra.debugger, extra.retriever]) {
        if (agent && planner.tokenizer.vocabSize !== agent.tokenizer.vocabSize) {
          throw new Error('planner, coder, debugger and retriever must share one tokenizer');
        }
      }
    }
    this.budgetBytes = memoryBudgetBytes(tf.getBackend(), config.memoryBudgetMiB);
    // With LoRA, each role's adapter (before its trainer: Adam holds the adapter's moments).
    if (this.labModels) attachAdapters(config, this.roleModels);
    for (const role of trainedRoles(config.grpo.mode, config.grpo)) {
      const model = this.trainableOf(role);
      this.trainers.set(
        role,
        new RoleTrainer(model, {
          learningRate: config.grpo.learningRate,
          temperature: config.grpo.temperature,
          numIterations: config.grpo.numIterations,
          maxGradNorm: config.grpo.maxGradNorm,
          loss: grpoLossOptions(config.grpo, role),
          padId: this.baseRoles ? this.baseRoles.prompts.stopId : this.lab.coder.tokenizer.padId,
          memoryBudgetBytes: this.budgetBytes,
        }),
      );
    }
  }

  static async create(config: RunConfig, deps: SessionDeps): Promise<TrainingSession> {
    const resolved = { ...config, grpo: resolveGrpoConfig(config.grpo) };
    if (deps.base) {
      const roles = createBaseRoles(resolved, deps.base);
      const tasks = runTasks(resolved, deps, baseContextOf(deps.base));
      return new TrainingSession(
        resolved,
        roles,
        deps.sandbox,
        tasks.suites,
        new TaskStream(resolved, 0, tasks.train),
      );
    }
    const { planner, coder } = deps;
    if (!planner || !coder) throw new Error('the session needs a Planner and a Coder, or a base');
    const tasks = runTasks(resolved, deps, contextOf(planner, coder));
    return new TrainingSession(
      resolved,
      { planner, coder },
      deps.sandbox,
      tasks.suites,
      new TaskStream(resolved, 0, tasks.train),
      await extraAgents(resolved, planner, coder, deps),
    );
  }

  static async restore(snapshot: RunSnapshot, deps: RestoreDeps): Promise<TrainingSession> {
    const state = getJson<RunState>(snapshot.files, 'run.json');
    if (snapshot.config.base !== undefined) {
      if (!deps.base)
        throw new Error(`the run trains adapters over ${snapshot.config.base}: load it`);
      const config = { ...snapshot.config, grpo: resolveGrpoConfig(snapshot.config.grpo) };
      const roles = await restoreBaseRoles(snapshot.files, config, deps.base);
      const tasks = runTasks(config, deps, baseContextOf(deps.base));
      const session = new TrainingSession(
        config,
        roles,
        deps.sandbox,
        tasks.suites,
        new TaskStream(snapshot.config, state.taskPosition, tasks.train),
      );
      await session.restoreTrainers(snapshot);
      session.stepCount = state.step;
      return session;
    }
    const planner = loadCheckpoint(getCheckpoint(snapshot.files, 'planner'));
    const coder = loadCheckpoint(getCheckpoint(snapshot.files, 'coder'));
    const config = { ...snapshot.config, grpo: resolveGrpoConfig(snapshot.config.grpo) };
    const saved = (role: 'debugger' | 'retriever') =>
      snapshot.files[`${role}/model.safetensors`]
        ? loadCheckpoint(getCheckpoint(snapshot.files, role))
        : undefined;
    const extra = await extraAgents(config, planner, coder, {
      debugger: saved('debugger'),
      retriever: saved('retriever'),
    });
    await restoreAdapters(snapshot.files, config, { planner, coder, ...roleCheckpoints(extra) });
    const tasks = runTasks(config, deps, contextOf(planner, coder));
    const session = new TrainingSession(
      config,
      { planner, coder },
      deps.sandbox,
      tasks.suites,
      new TaskStream(snapshot.config, state.taskPosition, tasks.train),
      extra,
    );
    await session.restoreTrainers(snapshot);
    session.stepCount = state.step;
    return session;
  }

  /** Each trainer's Adam state (and frozen reference) from the snapshot. */
  private async restoreTrainers(snapshot: RunSnapshot): Promise<void> {
    for (const [role, trainer] of this.trainers) {
      const bytes = snapshot.files[`${role}/trainer.safetensors`];
      if (!bytes) throw new Error(`snapshot has no ${role}/trainer.safetensors`);
      await trainer.importState(decodeTrainerState(bytes));
    }
  }

  /** The role adapters over a base (config.base), else null. */
  private readonly baseRoles: BaseRoles | null;

  /** The lab's warm starts; a run over a base has none (its roles are in `baseRoles`). */
  private get lab(): { planner: LoadedCheckpoint; coder: LoadedCheckpoint } {
    if (!this.labModels) throw new Error('a run over a base model has no lab checkpoints');
    return this.labModels;
  }

  private get planner(): LoadedCheckpoint {
    return this.lab.planner;
  }

  private get coder(): LoadedCheckpoint {
    return this.lab.coder;
  }

  /** What a role's update trains: its adapter over the base, or its lab model. */
  private trainableOf(role: Role): TrainableModel {
    if (this.baseRoles) {
      const model = this.baseRoles.roles.get(role);
      if (!model) throw new Error(`the ${role} has no adapter over the base`);
      return model;
    }
    return this.checkpointOf(role).model;
  }

  get step(): number {
    return this.stepCount;
  }

  /** Every role's model, by role (the LoRA helpers' view). */
  private get roleModels(): Partial<Record<Role, LoadedCheckpoint>> {
    if (!this.labModels) return {};
    return { planner: this.planner, coder: this.coder, ...roleCheckpoints(this.extra) };
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
    const chain = await this.runChain(tasks, stepIndex, 0);
    const { rollouts, credit, rolloutSeconds, sandboxSeconds } = chain;

    const updateStart = now();
    const updates = new Map<Role, RoleUpdate>();
    for (const [role, trainer] of this.trainers) {
      // The alternating schedule: the role whose stage this is not keeps its weights.
      if (!roleTrainsAt(grpo, role, stepIndex)) continue;
      const sequences =
        role === 'debugger'
          ? chain.debug
            ? debuggerSequences(chain.debug)
            : []
          : role === 'retriever'
            ? chain.retrieval && chain.retrieverCredit
              ? retrieverSequences(chain.retrieval, chain.retrieverCredit)
              : []
            : policySequences(role, rollouts, credit);
      // A step where nothing failed gives the Debugger nothing to learn from.
      if (sequences.length === 0) continue;
      this.activityText = `the ${ROLE_NAMES[role]} update (${sequences.length} sequences)`;
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
      // A step with no failing program gives the Debugger no group: no debugger/reward then.
      debugger: roleStats(
        'debugger',
        chain.debug && chain.debug.targets.length > 0 ? chain.debug.credit : null,
      ),
      retriever: roleStats('retriever', chain.retrieverCredit),
      timings: { stepSeconds: 0, rolloutSeconds, sandboxSeconds, updateSeconds },
    });
    if (chain.debug) {
      metrics[AGENT_METRICS.debuggerPrograms] = chain.debug.targets.length;
      if (chain.debug.targets.length > 0) {
        metrics[AGENT_METRICS.debuggerFixed] = fixedShare(chain.debug);
        metrics[roleMetric('debugger', 'clippedRatio')] = clippedShare(chain.debug.repairs);
      }
    }
    if (chain.retrieval?.completions) {
      const choices = chain.retrieval.choices;
      metrics[AGENT_METRICS.retrieverValid] =
        choices.filter((c) => c !== null).length / Math.max(1, choices.length);
      metrics[AGENT_METRICS.retrieverTop1] =
        choices.filter((c) => c === 0).length / Math.max(1, choices.length);
    }
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
      groups: this.groupsOf(this.stepCount, chain),
      skippedUpdates,
    };
  }

  /**
   * The topology's chain on `tasks`: the Retriever's examples (when it is in the topology),
   * the Planner's N plans and the Coder's M programs per plan, the sandbox's verdicts, the
   * credit, and the Debugger's repairs of failing programs (when it is in the topology).
   */
  private async runChain(
    tasks: Task[],
    stepIndex: number,
    seedOffset: number,
  ): Promise<ChainResult> {
    const { grpo } = this.config;
    const withPlans = usesPlanner(grpo.mode);
    const rolloutStart = now();
    this.activityText = `sampling (${tasks.length} tasks)`;
    let retrieval: RetrievalStep | null = null;
    if (withPlans && this.extra.library) {
      retrieval = await retrieve(
        tasks,
        this.extra.library,
        {
          sampler:
            grpo.retrievalPolicy === 'learned' && this.extra.retriever
              ? new KvCacheSampler(this.extra.retriever.model, this.budgetBytes)
              : null,
          tokenizer: this.coder.tokenizer,
        },
        {
          plansPerTask: grpo.plansPerTask,
          candidates: grpo.retrievalCandidates,
          policy: grpo.retrievalPolicy,
          temperature: grpo.temperature,
          topK: this.config.topK,
          seed: stepSeed(grpo.seed, stepIndex, RETRIEVER_SEED_STREAM) + seedOffset,
          plannerContext: this.planner.model.config.nCtx,
          maxPlanTokens: grpo.maxPlanTokens,
          ...(this.extra.retriever
            ? { retrieverContext: this.extra.retriever.model.config.nCtx }
            : {}),
        },
      );
    }
    const rollouts = await this.rollout(tasks, stepIndex, seedOffset, retrieval?.examples);
    let rolloutSeconds = (now() - rolloutStart) / 1000;

    const sandboxStart = now();
    this.activityText = 'judging programs in the sandbox';
    const judged = await judgePrograms(
      this.sandbox,
      rollouts.flatMap((r) => r.programs.flat().map((p) => ({ task: r.task, completion: p.text }))),
    );
    const sandboxSeconds = (now() - sandboxStart) / 1000;

    const plansPerTask = withPlans ? grpo.plansPerTask : 1;
    const perTask = plansPerTask * grpo.programsPerPlan;
    const outcomes = rollouts.map((_, t) =>
      judged.slice(t * perTask, (t + 1) * perTask).map((j) => j.outcome),
    );
    let credit = assignCredit(
      outcomes,
      {
        plansPerTask,
        programsPerPlan: grpo.programsPerPlan,
        withPlans,
        ...(rollouts.some((r) => r.droppedPlans)
          ? { droppedPlans: rollouts.flatMap((r) => r.droppedPlans ?? []) }
          : {}),
      },
      grpo.rewardWeights,
      grpo.scaleRewards,
      grpo.plannerCredit,
    );

    let debug: DebuggerStep | null = null;
    if (this.extra.debugger) {
      const repairStart = now();
      this.activityText = 'the Debugger repairing failing programs';
      const programs = rollouts.flatMap((r, t) =>
        r.programs.flatMap((list, n) =>
          list.map((p) => ({
            taskIndex: t,
            task: r.task,
            plan: r.plans?.[n]?.text ?? '',
            completion: p.text,
          })),
        ),
      );
      debug = await runDebugger(
        programs.map((p, i) => ({ ...p, judged: judged[i]! })),
        credit.coder.rewards,
        outcomes,
        {
          sampler: new KvCacheSampler(this.extra.debugger.model, this.budgetBytes),
          tokenizer: this.coder.tokenizer,
        },
        this.sandbox,
        {
          repairsPerProgram: grpo.repairsPerProgram,
          repairedProgramsPerStep: grpo.repairedProgramsPerStep,
          maxProgramTokens: grpo.maxProgramTokens,
          temperature: grpo.temperature,
          topK: this.config.topK,
          seed: stepSeed(grpo.seed, stepIndex, DEBUGGER_SEED_STREAM) + seedOffset,
          weights: grpo.rewardWeights,
          scale: grpo.scaleRewards,
          contextTokens: this.extra.debugger.model.config.nCtx,
        },
      );
      // The Debugger's time (sampling and judging its repairs) counts as sampling time.
      rolloutSeconds += (now() - repairStart) / 1000;
      if (grpo.repairCredit === 'repaired') {
        const D = debug.repairsPerProgram;
        credit = postRepairCredit(
          credit,
          debug.targets.map((target, p) => ({
            programIndex: target.programIndex,
            repairs: debug!.repairRewards.slice(p * D, (p + 1) * D),
          })),
          { tasks: tasks.length, plansPerTask, programsPerPlan: grpo.programsPerPlan },
          grpo.scaleRewards,
          grpo.plannerCredit,
        );
      }
    }
    // A choice is worth the mean Coder reward of the plan written with its example.
    const retrieverCreditOf =
      retrieval?.completions && credit.planner
        ? retrieverCredit(
            credit.planner.rewards,
            retrieval.choices,
            grpo.plansPerTask,
            grpo.rewardWeights.formatPenalty,
            grpo.scaleRewards,
          )
        : null;
    return {
      rollouts,
      judged,
      credit,
      retrieval,
      retrieverCredit: retrieverCreditOf,
      debug,
      rolloutSeconds,
      sandboxSeconds,
    };
  }

  /** The chain's sample groups, with each plan's retrieved example and each repaired program's repairs. */
  private groupsOf(step: number, chain: ChainResult): SampleGroup[] {
    const groups = sampleGroups(
      step,
      chain.rollouts,
      chain.judged,
      chain.credit,
      this.config.grpo.programsPerPlan,
    );
    const withAgents = attachAgentSamples(groups, chain);
    const render = this.baseRoles?.prompts.rendered;
    return render ? withRenderedPrompts(withAgents, chain.rollouts, render) : withAgents;
  }

  /** The weights of a role (the Debugger's and the Retriever's where the topology has them). */
  private checkpointOf(role: Role): LoadedCheckpoint {
    if (role === 'planner') return this.planner;
    if (role === 'coder') return this.coder;
    const agent = this.extra[role];
    if (!agent) throw new Error(`the ${role} is not in the topology ${this.config.grpo.agents}`);
    return agent;
  }

  /** Greedy pass@1 on the fixed suites (the first evalTasksPerTier tasks of each). */
  async evaluate(suites?: EvalSuiteName[]): Promise<EvalReport> {
    const result = await this.evaluateDetailed(suites);
    return { step: this.stepCount, metrics: result.metrics };
  }

  /** As evaluate, with per-suite counts (for tables). */
  async evaluateDetailed(suites?: EvalSuiteName[]): Promise<EvaluationResult> {
    const names = suites ?? (Object.keys(this.suites) as EvalSuiteName[]);
    const chosen: Record<string, Task[]> = {};
    for (const name of names) {
      const tasks = this.suites[name];
      if (tasks) chosen[name] = tasks.slice(0, this.config.evalTasksPerTier);
    }
    return evaluateSuites(
      this.evalAgents(),
      chosen,
      {
        maxPlanTokens: this.config.grpo.maxPlanTokens,
        maxProgramTokens: this.config.grpo.maxProgramTokens,
        // The Collaboration Gain by intervention: the same Coder from a swapped plan, the
        // reference plan and no plan.
        interventions: true,
        coderSees: this.config.grpo.coderSees,
      },
      this.sandbox,
    );
  }

  /** Samplers over the current weights; no Planner in `single` mode. */
  private agents() {
    const base = this.baseRoles;
    if (base) {
      const sampler = (role: Role) => new KvCacheSampler(base.roles.get(role)!, this.budgetBytes);
      return {
        // The lab's tokenizer is not used over a base: prompts and texts are `prompts`'.
        tokenizer: null as unknown as LoadedCheckpoint['tokenizer'],
        prompts: base.prompts,
        planner: usesPlanner(this.config.grpo.mode) ? sampler('planner') : null,
        coder: sampler('coder'),
      };
    }
    return {
      tokenizer: this.coder.tokenizer,
      planner: usesPlanner(this.config.grpo.mode)
        ? new KvCacheSampler(this.planner.model, this.budgetBytes)
        : null,
      coder: new KvCacheSampler(this.coder.model, this.budgetBytes),
      selfPlan: this.config.grpo.mode === 'self-plan',
    };
  }

  /** The evaluation's agents: the Planner and Coder, and the topology's Retriever and Debugger. */
  private evalAgents(): EvalAgents {
    const { grpo } = this.config;
    const { library, retriever, debugger: debuggerAgent } = this.extra;
    return {
      ...this.agents(),
      ...(library && usesPlanner(grpo.mode)
        ? {
            retriever: {
              library,
              candidates: grpo.retrievalCandidates,
              plannerContext: this.planner.model.config.nCtx,
              retrieverContext: retriever?.model.config.nCtx ?? Number.POSITIVE_INFINITY,
              sampler:
                grpo.retrievalPolicy === 'learned' && retriever
                  ? new KvCacheSampler(retriever.model, this.budgetBytes)
                  : null,
            },
          }
        : {}),
      ...(debuggerAgent
        ? {
            debugger: {
              sampler: new KvCacheSampler(debuggerAgent.model, this.budgetBytes),
              contextTokens: debuggerAgent.model.config.nCtx,
            },
          }
        : {}),
    };
  }

  /** The Planner's N plans and the Coder's M programs per plan, seeded by step. */
  private rollout(
    tasks: Task[],
    stepIndex: number,
    seedOffset: number,
    examples?: RetrievalStep['examples'],
  ): Promise<TaskRollout[]> {
    const { grpo } = this.config;
    const dropout = usesPlanner(grpo.mode) ? planDropoutOf(this.config) : 0;
    // Drawn only when dropout is on, so a run without it samples exactly what it always did.
    const dropped =
      dropout > 0
        ? droppedPlans(
            tasks.length * grpo.plansPerTask,
            dropout,
            stepSeed(grpo.seed, stepIndex, PLAN_DROPOUT_SEED_STREAM) + seedOffset,
          )
        : null;
    return sampleRollouts(tasks, this.agents(), {
      ...(examples ? { examples } : {}),
      ...(dropped ? { droppedPlans: dropped } : {}),
      coderSees: grpo.coderSees,
      selfPlan: grpo.mode === 'self-plan',
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
    // Its own seeds (offset), so asking never replays the next training step's samples.
    const chain = await this.runChain([task], this.stepCount, 7919);
    this.activityText = 'idle';
    const [group] = this.groupsOf(this.stepCount, chain);
    if (!group) throw new Error('sampling produced no group');
    return group;
  }

  async snapshot(): Promise<RunSnapshot> {
    const files: RunSnapshot['files'] = {};
    if (this.baseRoles) {
      // Over a base: the adapters and Adam's moments only (the base is where config.base says).
      for (const [role, trainer] of this.trainers)
        files[`${role}/trainer.safetensors`] = encodeTrainerState(await trainer.exportState());
      await putBaseAdapters(files, this.baseRoles);
      const state: RunState = {
        format: 1,
        step: this.stepCount,
        taskPosition: this.tasks.position,
      };
      putJson(files, 'run.json', state);
      return { config: this.config, step: this.stepCount, files };
    }
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
    for (const role of ['debugger', 'retriever'] as const) {
      const agent = this.extra[role];
      if (agent)
        putCheckpoint(files, role, await saveCheckpoint(agent.model, agent.tokenizer, lab));
    }
    for (const [role, trainer] of this.trainers) {
      files[`${role}/trainer.safetensors`] = encodeTrainerState(await trainer.exportState());
    }
    await putAdapters(files, this.config, this.roleModels);
    const state: RunState = { format: 1, step: this.stepCount, taskPosition: this.tasks.position };
    putJson(files, 'run.json', state);
    return { config: this.config, step: this.stepCount, files };
  }

  dispose(): void {
    for (const trainer of this.trainers.values()) trainer.dispose();
    this.trainers.clear();
    if (this.baseRoles) {
      disposeBaseRoles(this.baseRoles);
      disposeHubModel(this.baseRoles.base.model);
      return;
    }
    disposeModel(this.planner.model);
    disposeModel(this.coder.model);
    if (this.extra.debugger) disposeModel(this.extra.debugger.model);
    if (this.extra.retriever) disposeModel(this.extra.retriever.model);
  }
}

const ROLE_NAMES: Record<Role, string> = {
  planner: 'Planner',
  coder: 'Coder',
  debugger: 'Debugger',
  retriever: 'Retriever',
};

function clippedShare(completions: readonly { finished: boolean }[]): number {
  return completions.length === 0
    ? 0
    : completions.filter((c) => !c.finished).length / completions.length;
}

/**
 * The topology's extra agents: the given warm starts, else a copy of the Coder (the
 * Debugger) or of the Planner (the Retriever); the Retriever's library of train-split tasks.
 * The default topology adds nothing.
 */
async function extraAgents(
  config: RunConfig,
  planner: LoadedCheckpoint,
  coder: LoadedCheckpoint,
  given: { debugger?: LoadedCheckpoint | undefined; retriever?: LoadedCheckpoint | undefined },
): Promise<ExtraAgents> {
  const { agents, retrievalPolicy } = config.grpo;
  const copy = async (from: LoadedCheckpoint, role: Role): Promise<LoadedCheckpoint> =>
    loadCheckpoint(
      await saveCheckpoint(from.model, from.tokenizer, { ...from.lab, copiedFor: role }),
    );
  const extra: ExtraAgents = {};
  if (hasAgent(agents, 'debugger'))
    extra.debugger = given.debugger ?? (await copy(coder, 'debugger'));
  if (hasAgent(agents, 'retriever')) {
    extra.library = buildLibrary();
    if (retrievalPolicy === 'learned') {
      extra.retriever = given.retriever ?? (await copy(planner, 'retriever'));
    }
  }
  // Models given but not in the topology are not kept.
  for (const role of ['debugger', 'retriever'] as const) {
    const model = given[role];
    if (model && extra[role] !== model) disposeModel(model.model);
  }
  return extra;
}

function roleCheckpoints(extra: ExtraAgents): Partial<Record<Role, LoadedCheckpoint>> {
  return {
    ...(extra.debugger ? { debugger: extra.debugger } : {}),
    ...(extra.retriever ? { retriever: extra.retriever } : {}),
  };
}

/**
 * Over a base: statements are cut to a budget of tokens the chat prompts leave room for (a
 * pretrained model's context is long; what bounds a prompt is the cost of each token).
 */
function baseContextOf(base: BaseModel) {
  // The chat template's own tokens around an empty task come off the budget first.
  const template = chatPrompts(base.tokenizer).coder({ statement: '', entryPoint: 'f' }, '').length;
  return {
    tokenizer: base.tokenizer,
    contextTokens: Math.min(base.model.config.maxPositionEmbeddings, BASE_PROMPT_TOKENS) - template,
  };
}

/** Statement + plan + program tokens a prompt over a base may hold at most. */
const BASE_PROMPT_TOKENS = 1024;

/** The tokenizer and the context every role's prompt must fit (the smaller model's). */
function contextOf(planner: LoadedCheckpoint, coder: LoadedCheckpoint) {
  return {
    tokenizer: coder.tokenizer,
    contextTokens: Math.min(planner.model.config.nCtx, coder.model.config.nCtx),
  };
}

function now(): number {
  return performance.now();
}
