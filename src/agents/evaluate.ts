// Evaluation on fixed task suites, Planner → Coder, judged by the sandbox. One
// implementation serves the engine (a run's eval/* metrics) and the CLI (`npm run eval`,
// per-tier tables). For each task the Planner writes one greedy plan and the Coder one
// greedy program from it (in single mode, with no Planner, from an empty plan); the
// sandbox judges every program: the extracted function, or the raw completion when none
// was found. Greedy decoding makes it deterministic. Token caps are the run config's
// (maxPlanTokens, maxProgramTokens). Options add the Coder given each task's reference
// plan (what the Planner costs), K sampled plan→code pairs per task (pass@K, and pass@1 of the
// first sampled program that passes the statement's own examples: the examples as a check), and the
// Collaboration Gain by intervention: the same Coder, greedy, on the same tasks, from (a) the
// Planner's plan, (b) another task's plan of the same suite, (c) the reference plan, (d) no
// plan; collaboration_gain = (a) − (b), planner_gap = (c) − (a), plan_vs_none = (a) − (d).
// With `coderSees` plan the Coder reads the signature instead of the statement throughout.
// In self-plan mode (one model, selfPlan.ts) the plan is the model's own, up to <|code|>.

import type { CoderSees } from '../rl/config';
import { extractFunction } from '../rl/extractFunction';
import { AGENT_METRICS, EVAL_METRICS, evalPassAt1Metric } from '../rl/metrics';
import type { SampleOptions, Sampler } from '../rollout/types';
import type { CasesJob, RunResult, Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';
import type { CharTokenizer } from '../tokenizer';
import { coderView } from './coderView';
import { debuggerPrompt, failureReport } from './debugger';
import {
  coderPrompt,
  completionText,
  plannerPromptWithExample,
  type WorkedExample,
} from './format';
import type { ExampleLibrary } from './retriever';
import { parseChoice, retrieverPrompt } from './retriever/format';
import type { RolePrompts } from './rolePrompts';
import { selfPlanPrompt } from './selfPlan';

export interface EvalAgents {
  tokenizer: CharTokenizer;
  /** A pretrained base's prompts (agents/chatPrompts.ts); absent: the lab's formats over `tokenizer`. */
  prompts?: RolePrompts;
  /** null: single-agent mode, the Coder reads an empty plan. */
  planner: Sampler | null;
  coder: Sampler;
  /** One model for both roles: a role token starts each prompt. */
  shared?: boolean;
  /**
   * Self-plan mode (planner null): the Coder's model writes its own plan from the Planner's
   * prompt up to <|code|>, then the program from there, which is the Coder's prompt with that
   * plan (selfPlan.ts); so the interventions swap, replace or remove its own plan.
   */
  selfPlan?: boolean;
  /**
   * With a Retriever: the Planner reads the example it picks greedily among BM25's K
   * candidates (sampler null: BM25's top-1).
   */
  retriever?: {
    library: ExampleLibrary;
    candidates: number;
    sampler: Sampler | null;
    /** An example that leaves the Planner no room for a whole plan is not shown. */
    plannerContext: number;
    retrieverContext: number;
  };
  /**
   * With a Debugger: each failing greedy program gets one greedy repair, judged again
   * (`eval/pass@1_repair`, `eval/repair/fixed`); `eval/pass@1` stays the Coder's own.
   */
  debugger?: { sampler: Sampler; contextTokens: number };
}

export interface EvalOptions {
  /** Longest plan / program in tokens: the run config's GrpoConfig.maxPlanTokens / maxProgramTokens. */
  maxPlanTokens: number;
  maxProgramTokens: number;
  /** Also judge the Coder given each task's first reference plan (`pass@1_reference_plan`). */
  referencePlans?: boolean;
  /** K sampled plan→code pairs per task for pass@K; 1 (the default): greedy only. */
  samples?: number;
  /** Temperature of the sampled pairs (default 0.8). */
  temperature?: number;
  /** The sampled plans use seed + 1, their programs seed + 2 (default 1). */
  seed?: number;
  /**
   * The interventions on the plan (needs a Planner): the Coder's greedy program from another
   * task's plan, the reference plan and no plan, on the same tasks (`pass@1_swapped_plan`,
   * `pass@1_reference_plan`, `pass@1_no_plan`, and the three differences).
   */
  interventions?: boolean;
  /** What the Coder reads besides the plan (default: the statement). */
  coderSees?: CoderSees;
}

export interface TierReport {
  tasks: number;
  'pass@1': number;
  /** Coder alone, given the task's reference plan (greedy): how much the Planner costs. */
  'pass@1_reference_plan'?: number;
  /** With interventions: pass@1 from another task's plan (the next task of the suite). */
  'pass@1_swapped_plan'?: number;
  /** With interventions: pass@1 from an empty plan. */
  'pass@1_no_plan'?: number;
  /** With interventions: pass@1 − pass@1_swapped_plan, how much the Coder uses the plan. */
  collaboration_gain?: number;
  /** With interventions: pass@1_reference_plan − pass@1, what a better Planner would add. */
  planner_gap?: number;
  /** With interventions: pass@1 − pass@1_no_plan. */
  plan_vs_none?: number;
  /** With samples > 1: mean pass rate of sampled pairs, and the unbiased pass@K (= any of K passed). */
  'pass@1_sampled'?: number;
  'pass@k'?: number;
  /**
   * With samples > 1: one program submitted per task, chosen without the hidden tests: the first
   * of the K sampled ones that passes the examples its statement shows, else the greedy one
   * (which is all a task without examples gets), judged on every test.
   */
  'pass@1_checked'?: number;
  /** Fraction of greedy plans equal to one of the task's reference plans. */
  plan_exact: number;
  /** Fraction of greedy completions holding a complete function that the sandbox could parse. */
  valid_syntax: number;
  /** With a Debugger: pass@1 after one greedy repair of each failing program, and the share it fixed. */
  'pass@1_repair'?: number;
  repair_fixed?: number;
  /** Mean QuickJS work and peak heap bytes of the passing greedy programs (null when none passed). */
  exec_cost: number | null;
  peak_memory: number | null;
}

export interface EvalExample {
  id: string;
  tier: string;
  plan: string;
  code: string;
  passed: boolean;
  /** With samples > 1: whether the examples-checked submission passed (pass@1_checked's). */
  checked?: boolean;
}

/** One suite: all its tasks, each tier of them, and every task's greedy plan and program. */
export interface SuiteReport {
  overall: TierReport;
  tiers: Record<string, TierReport>;
  examples: EvalExample[];
}

export interface EvaluationResult {
  /**
   * `eval/pass@1/<suite>`, `eval/pass@1` (all tasks), `eval/exec_cost[/<suite>]`,
   * `eval/peak_memory[/<suite>]`; cost and memory only where something passed.
   */
  metrics: Record<string, number>;
  suites: Record<string, SuiteReport>;
}

export async function evaluateSuites(
  agents: EvalAgents,
  suites: Readonly<Record<string, readonly Task[]>>,
  options: EvalOptions,
  sandbox: Sandbox,
): Promise<EvaluationResult> {
  const names = Object.keys(suites);
  const tasks = names.flatMap((name) => suites[name] ?? []);
  const tok = agents.tokenizer;
  const shared = agents.shared ?? false;
  const samples = options.samples ?? 1;
  const seed = options.seed ?? 1;
  const temperature = options.temperature ?? 0.8;
  const chat = agents.prompts;
  const decoding = (maxNewTokens: number, t: number, s: number): SampleOptions => ({
    maxNewTokens,
    temperature: t,
    topK: 0,
    seed: s,
    stopId: chat ? chat.stopId : tok.eosId,
    ...(chat?.stopIds ? { stopIds: chat.stopIds } : {}),
  });
  const texts = async (sampler: Sampler, prompts: number[][], opts: SampleOptions) =>
    prompts.length === 0
      ? []
      : (await sampler.sample(prompts, opts)).tokens.map((ids) =>
          chat ? chat.text(ids) : completionText(tok, ids),
        );
  // The Retriever's greedy pick for every task (the same example for its sampled plans).
  const exampleOf = new Map<string, WorkedExample | null>();
  const retrieverAgent = agents.retriever;
  if (retrieverAgent && agents.planner) {
    const candidates = tasks.map((t) =>
      retrieverAgent.library.candidates(t.statement, retrieverAgent.candidates),
    );
    const answers = retrieverAgent.sampler
      ? await texts(
          retrieverAgent.sampler,
          tasks.map((t, i) =>
            retrieverPrompt(tok, t.statement, candidates[i]!, retrieverAgent.retrieverContext),
          ),
          { maxNewTokens: 2, temperature: 0, topK: 0, seed, stopId: tok.eosId },
        )
      : tasks.map(() => '1');
    tasks.forEach((t, i) => {
      const list = candidates[i]!;
      const example = list[parseChoice(answers[i]!, list.length) ?? 0] ?? null;
      const fits =
        example &&
        plannerPromptWithExample(tok, t.statement, example, shared).length +
          options.maxPlanTokens <=
          retrieverAgent.plannerContext;
      exampleOf.set(t.id, fits ? example : null);
    });
  }
  const selfPlan = agents.selfPlan === true && !agents.planner && !chat;
  const codeId = selfPlan ? tok.special('<|code|>') : -1;
  // Self-plan: the model's plan up to <|code|>; one that ended without it wrote no program
  // (`writesCode` false), as its sequence in a rollout would have.
  const selfPlanOf = async (list: readonly Task[], opts: SampleOptions) => {
    const ids =
      list.length === 0
        ? []
        : (
            await agents.coder.sample(
              list.map((t) => selfPlanPrompt(tok, t.statement)),
              { ...opts, stopIds: [codeId, tok.eosId] },
            )
          ).tokens;
    return {
      plans: ids.map((t) => completionText(tok, t)),
      writesCode: ids.map((t) => t.at(-1) === codeId),
    };
  };
  const planOf = (list: readonly Task[], opts: SampleOptions): Promise<string[]> =>
    agents.planner
      ? texts(
          agents.planner,
          list.map((t) =>
            chat
              ? chat.planner(t)
              : plannerPromptWithExample(tok, t.statement, exampleOf.get(t.id) ?? null, shared),
          ),
          opts,
        )
      : Promise.resolve(list.map(() => ''));
  /** Plans and, for self-plan, whether each reached <|code|>. */
  const plansOf = async (list: readonly Task[], opts: SampleOptions) =>
    selfPlan
      ? selfPlanOf(list, opts)
      : { plans: await planOf(list, opts), writesCode: null as boolean[] | null };
  /** The programs from those plans; none where a self-plan never reached <|code|>. */
  const programsOf = async (
    list: readonly Task[],
    planned: { plans: string[]; writesCode: boolean[] | null },
    opts: SampleOptions,
  ) =>
    (await codeOf(list, planned.plans, opts)).map((code, i) =>
      planned.writesCode && !planned.writesCode[i] ? '' : code,
    );
  const codeOf = (list: readonly Task[], plans: readonly string[], opts: SampleOptions) =>
    texts(
      agents.coder,
      list.map((task, i) => {
        const t = coderView(task, options.coderSees);
        return chat ? chat.coder(t, plans[i]!) : coderPrompt(tok, t.statement, plans[i]!, shared);
      }),
      opts,
    );

  const greedyPlan = decoding(options.maxPlanTokens, 0, seed);
  const greedyCode = decoding(options.maxProgramTokens, 0, seed);
  const planned = await plansOf(tasks, greedyPlan);
  const { plans } = planned;
  const codes = await programsOf(tasks, planned, greedyCode);
  const results = await judge(sandbox, tasks, codes);

  // One greedy repair round for the failing greedy programs.
  let repairedPasses: boolean[] | null = null;
  if (agents.debugger) {
    const debuggerPrompts = new Map<number, number[]>();
    results.forEach((r, i) => {
      if (r.passed) return;
      const t = tasks[i]!;
      const extracted = extractFunction(codes[i]!, t.entryPoint);
      const run = extracted.formatOk ? r : null;
      const prompt = debuggerPrompt(
        tok,
        t.statement,
        plans[i]!,
        extracted.formatOk ? extracted.code : codes[i]!,
        failureReport(t, run) ?? 'no test failed',
      );
      // A prompt that leaves no room for a whole repair is not repaired (it stays failing).
      if (prompt.length + options.maxProgramTokens <= agents.debugger!.contextTokens) {
        debuggerPrompts.set(i, prompt);
      }
    });
    const failing = [...debuggerPrompts.keys()];
    const repairs = await texts(
      agents.debugger.sampler,
      failing.map((i) => debuggerPrompts.get(i)!),
      greedyCode,
    );
    const repairResults = await judge(
      sandbox,
      failing.map((i) => tasks[i]!),
      repairs,
    );
    repairedPasses = results.map((r) => r.passed);
    failing.forEach((i, k) => {
      repairedPasses![i] = repairResults[k]!.passed;
    });
  }

  const interventions = options.interventions === true && (agents.planner !== null || selfPlan);
  let referencePasses: boolean[] | null = null;
  if (options.referencePlans || interventions) {
    const referencePlans = tasks.map((t) => t.strategies[0]?.plan ?? '');
    const referenceCodes = await codeOf(tasks, referencePlans, greedyCode);
    referencePasses = (await judge(sandbox, tasks, referenceCodes)).map((r) => r.passed);
  }

  // The Coder from no plan and from another task's plan (the next task of the same suite,
  // cyclically: the same kind of task, the wrong one), greedy, on the same tasks.
  let noPlanPasses: boolean[] | null = null;
  let swappedPasses: boolean[] | null = null;
  if (interventions) {
    const noPlanCodes = await codeOf(
      tasks,
      tasks.map(() => ''),
      greedyCode,
    );
    noPlanPasses = (await judge(sandbox, tasks, noPlanCodes)).map((r) => r.passed);
    const swapped = swappedIndices(names.map((name) => suites[name]?.length ?? 0));
    const swappedCodes = await codeOf(
      tasks,
      swapped.map((j) => plans[j]!),
      greedyCode,
    );
    swappedPasses = (await judge(sandbox, tasks, swappedCodes)).map((r) => r.passed);
  }

  // K sampled plan→code pairs per task, task-major.
  let sampledPasses: number[] | null = null;
  let checkedPasses: boolean[] | null = null;
  if (samples > 1) {
    const repeated = tasks.flatMap((t) => Array.from({ length: samples }, () => t));
    const sampled = await plansOf(repeated, decoding(options.maxPlanTokens, temperature, seed + 1));
    const sCodes = await programsOf(
      repeated,
      sampled,
      decoding(options.maxProgramTokens, temperature, seed + 2),
    );
    const sResults = await judge(sandbox, repeated, sCodes);
    sampledPasses = tasks.map(
      (_, i) => sResults.slice(i * samples, (i + 1) * samples).filter((r) => r.passed).length,
    );
    checkedPasses = tasks.map((task, i) => {
      const sampled = sResults.slice(i * samples, (i + 1) * samples);
      return (firstPassingShown(sampled, task.examples?.length ?? 0) ?? results[i]!).passed;
    });
  }

  const tierReport = (indices: readonly number[]): TierReport => {
    const n = indices.length;
    const share = (count: number) => (n === 0 ? 0 : count / n);
    const passing = indices.map((i) => results[i]!).filter((r) => r.passed);
    const reference = referencePasses;
    const report: TierReport = {
      tasks: n,
      'pass@1': share(passing.length),
      ...(reference && {
        'pass@1_reference_plan': share(indices.filter((i) => reference[i]).length),
      }),
      plan_exact: share(
        indices.filter((i) => tasks[i]!.strategies.some((s) => s.plan === plans[i])).length,
      ),
      valid_syntax: share(
        indices.filter(
          (i) =>
            extractFunction(codes[i]!, tasks[i]!.entryPoint).formatOk &&
            !isSyntaxError(results[i]!),
        ).length,
      ),
      exec_cost: meanOrNull(passing.map((r) => r.cost.work)),
      peak_memory: meanOrNull(passing.map((r) => r.cost.peakBytes)),
    };
    if (repairedPasses) {
      const after = repairedPasses;
      const failing = indices.filter((i) => !results[i]!.passed);
      // Share of ALL failing programs (an unrepaired one counts as not fixed).
      report['pass@1_repair'] = share(indices.filter((i) => after[i]).length);
      report.repair_fixed =
        failing.length === 0 ? 0 : failing.filter((i) => after[i]).length / failing.length;
    }
    if (noPlanPasses && swappedPasses && reference) {
      const passRate = (passes: boolean[]) => share(indices.filter((i) => passes[i]).length);
      const swappedRate = passRate(swappedPasses);
      const noPlanRate = passRate(noPlanPasses);
      const referenceRate = passRate(reference);
      report['pass@1_swapped_plan'] = swappedRate;
      report['pass@1_no_plan'] = noPlanRate;
      report.collaboration_gain = report['pass@1'] - swappedRate;
      report.planner_gap = referenceRate - report['pass@1'];
      report.plan_vs_none = report['pass@1'] - noPlanRate;
    }
    if (sampledPasses) {
      const passes = sampledPasses;
      report['pass@1_sampled'] = share(indices.reduce((s, i) => s + passes[i]! / samples, 0));
      report['pass@k'] = share(indices.filter((i) => passes[i]! > 0).length);
    }
    if (checkedPasses) {
      const checked = checkedPasses;
      report['pass@1_checked'] = share(indices.filter((i) => checked[i]).length);
    }
    return report;
  };

  const metrics: Record<string, number> = {};
  const reports: Record<string, SuiteReport> = {};
  let offset = 0;
  for (const name of names) {
    const indices = (suites[name] ?? []).map((_, i) => offset + i);
    offset += indices.length;
    const byTier = new Map<string, number[]>();
    for (const i of indices) {
      const tier = tasks[i]!.tier;
      byTier.set(tier, [...(byTier.get(tier) ?? []), i]);
    }
    const overall = tierReport(indices);
    reports[name] = {
      overall,
      tiers: Object.fromEntries([...byTier].sort().map(([tier, idx]) => [tier, tierReport(idx)])),
      examples: indices.map((i) => ({
        id: tasks[i]!.id,
        tier: tasks[i]!.tier,
        plan: plans[i]!,
        code: codes[i]!,
        passed: results[i]!.passed,
        ...(checkedPasses && { checked: checkedPasses[i] }),
      })),
    };
    metrics[evalPassAt1Metric(name)] = overall['pass@1'];
    if (overall['pass@1_repair'] !== undefined) {
      metrics[`${AGENT_METRICS.evalPassAt1Repair}/${name}`] = overall['pass@1_repair'];
    }
    Object.assign(metrics, interventionMetrics(overall, `/${name}`));
    if (overall.exec_cost !== null) metrics[`${EVAL_METRICS.execCost}/${name}`] = overall.exec_cost;
    if (overall.peak_memory !== null) {
      metrics[`${EVAL_METRICS.peakMemory}/${name}`] = overall.peak_memory;
    }
  }
  const all = tierReport(tasks.map((_, i) => i));
  metrics[EVAL_METRICS.passAt1] = all['pass@1'];
  if (all['pass@1_repair'] !== undefined) {
    metrics[AGENT_METRICS.evalPassAt1Repair] = all['pass@1_repair'];
    metrics[AGENT_METRICS.evalRepairFixed] = all.repair_fixed ?? 0;
  }
  Object.assign(metrics, interventionMetrics(all, ''));
  if (all.exec_cost !== null) metrics[EVAL_METRICS.execCost] = all.exec_cost;
  if (all.peak_memory !== null) metrics[EVAL_METRICS.peakMemory] = all.peak_memory;
  return { metrics, suites: reports };
}

/**
 * The first program whose verdicts pass the `shown` examples (a statement's examples are the
 * first of its tests); none when there are no examples to check, or none passes them.
 */
export function firstPassingShown(
  results: readonly RunResult[],
  shown: number,
): RunResult | undefined {
  if (shown === 0) return undefined;
  return results.find(
    (r) => r.tests.length >= shown && r.tests.slice(0, shown).every((v) => v.passed),
  );
}

/**
 * For each task (suites laid end to end), the index of the task whose plan it is given in
 * the swapped intervention: the next task of its own suite, cyclically (a suite of one keeps
 * its own plan, so its swap measures nothing).
 */
export function swappedIndices(suiteSizes: readonly number[]): number[] {
  const out: number[] = [];
  let offset = 0;
  for (const size of suiteSizes) {
    for (let i = 0; i < size; i++) out.push(offset + ((i + 1) % size));
    offset += size;
  }
  return out;
}

/** The interventions' eval/* metrics of one report (suffix `/suite`, or '' for all tasks). */
function interventionMetrics(report: TierReport, suffix: string): Record<string, number> {
  if (report.collaboration_gain === undefined) return {};
  return {
    [`${EVAL_METRICS.passAt1SwappedPlan}${suffix}`]: report['pass@1_swapped_plan'] ?? 0,
    [`${EVAL_METRICS.passAt1ReferencePlan}${suffix}`]: report['pass@1_reference_plan'] ?? 0,
    [`${EVAL_METRICS.passAt1NoPlan}${suffix}`]: report['pass@1_no_plan'] ?? 0,
    [`${EVAL_METRICS.collaborationGain}${suffix}`]: report.collaboration_gain,
    [`${EVAL_METRICS.plannerGap}${suffix}`]: report.planner_gap ?? 0,
    [`${EVAL_METRICS.planVsNone}${suffix}`]: report.plan_vs_none ?? 0,
  };
}

/** Every program in one batched call: the extracted function, or the raw completion. */
function judge(
  sandbox: Sandbox,
  tasks: readonly Task[],
  completions: readonly string[],
): Promise<RunResult[]> {
  if (tasks.length === 0) return Promise.resolve([]);
  return sandbox.run(
    tasks.map((t, i): CasesJob => {
      const extracted = extractFunction(completions[i]!, t.entryPoint);
      return {
        kind: 'cases',
        id: `${t.id}#${i}`,
        code: extracted.formatOk ? extracted.code : completions[i]!,
        entryPoint: t.entryPoint,
        tests: t.tests,
      };
    }),
  );
}

function isSyntaxError(r: RunResult): boolean {
  return r.errorKind === 'syntax' || r.tests.some((t) => t.errorKind === 'syntax');
}

function meanOrNull(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}
