// Evaluation on fixed task suites, Planner → Coder, judged by the sandbox. One
// implementation serves the engine (a run's eval/* metrics) and the CLI (`npm run eval`,
// per-tier tables). For each task the Planner writes one greedy plan and the Coder one
// greedy program from it (in single mode, with no Planner, from an empty plan); the
// sandbox judges every program: the extracted function, or the raw completion when none
// was found. Greedy decoding makes it deterministic. Token caps are the run config's
// (maxPlanTokens, maxProgramTokens). Options add the Coder given each task's reference
// plan (what the Planner costs), K sampled plan→code pairs per task (pass@K), and the Coder
// writing from the statement alone (single mode's prompt, an empty plan) on the same tasks:
// the Collaboration Gain, pass@1 with the Planner's plan minus pass@1 without one.

import { extractFunction } from '../rl/extractFunction';
import { AGENT_METRICS, EVAL_METRICS, evalPassAt1Metric } from '../rl/metrics';
import type { SampleOptions, Sampler } from '../rollout/types';
import type { CasesJob, RunResult, Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';
import type { CharTokenizer } from '../tokenizer';
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
   * Also judge the Coder's greedy program from the statement alone (an empty plan, single
   * mode's prompt) on the same tasks: `pass@1_alone` and `collaboration_gain`. Needs a Planner.
   */
  coderAlone?: boolean;
}

export interface TierReport {
  tasks: number;
  'pass@1': number;
  /** Coder alone, given the task's reference plan (greedy): how much the Planner costs. */
  'pass@1_reference_plan'?: number;
  /** With coderAlone: the Coder's greedy pass@1 from the statement alone (no plan). */
  'pass@1_alone'?: number;
  /** With coderAlone: pass@1 (from the Planner's plan) − pass@1_alone, on the same tasks. */
  collaboration_gain?: number;
  /** With samples > 1: mean pass rate of sampled pairs, and the unbiased pass@K (= any of K passed). */
  'pass@1_sampled'?: number;
  'pass@k'?: number;
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
  const codeOf = (list: readonly Task[], plans: readonly string[], opts: SampleOptions) =>
    texts(
      agents.coder,
      list.map((t, i) =>
        chat ? chat.coder(t, plans[i]!) : coderPrompt(tok, t.statement, plans[i]!, shared),
      ),
      opts,
    );

  const greedyPlan = decoding(options.maxPlanTokens, 0, seed);
  const greedyCode = decoding(options.maxProgramTokens, 0, seed);
  const plans = await planOf(tasks, greedyPlan);
  const codes = await codeOf(tasks, plans, greedyCode);
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

  let referencePasses: boolean[] | null = null;
  if (options.referencePlans) {
    const referencePlans = tasks.map((t) => t.strategies[0]?.plan ?? '');
    const referenceCodes = await codeOf(tasks, referencePlans, greedyCode);
    referencePasses = (await judge(sandbox, tasks, referenceCodes)).map((r) => r.passed);
  }

  // The Coder from the statement alone (an empty plan), greedy, on the same tasks. Last, so
  // the calls above reach the sandbox in the order they always did.
  let alonePasses: boolean[] | null = null;
  if (options.coderAlone && agents.planner) {
    const aloneCodes = await codeOf(
      tasks,
      tasks.map(() => ''),
      greedyCode,
    );
    alonePasses = (await judge(sandbox, tasks, aloneCodes)).map((r) => r.passed);
  }

  // K sampled plan→code pairs per task, task-major.
  let sampledPasses: number[] | null = null;
  if (samples > 1) {
    const repeated = tasks.flatMap((t) => Array.from({ length: samples }, () => t));
    const sPlans = await planOf(repeated, decoding(options.maxPlanTokens, temperature, seed + 1));
    const sCodes = await codeOf(
      repeated,
      sPlans,
      decoding(options.maxProgramTokens, temperature, seed + 2),
    );
    const sResults = await judge(sandbox, repeated, sCodes);
    sampledPasses = tasks.map(
      (_, i) => sResults.slice(i * samples, (i + 1) * samples).filter((r) => r.passed).length,
    );
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
    if (alonePasses) {
      const alone = alonePasses;
      report['pass@1_alone'] = share(indices.filter((i) => alone[i]).length);
      report.collaboration_gain = report['pass@1'] - report['pass@1_alone'];
    }
    if (sampledPasses) {
      const passes = sampledPasses;
      report['pass@1_sampled'] = share(indices.reduce((s, i) => s + passes[i]! / samples, 0));
      report['pass@k'] = share(indices.filter((i) => passes[i]! > 0).length);
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
      })),
    };
    metrics[evalPassAt1Metric(name)] = overall['pass@1'];
    if (overall['pass@1_repair'] !== undefined) {
      metrics[`${AGENT_METRICS.evalPassAt1Repair}/${name}`] = overall['pass@1_repair'];
    }
    if (overall.collaboration_gain !== undefined) {
      metrics[`${EVAL_METRICS.collaborationGain}/${name}`] = overall.collaboration_gain;
      metrics[`${EVAL_METRICS.passAt1Alone}/${name}`] = overall['pass@1_alone'] ?? 0;
    }
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
  if (all.collaboration_gain !== undefined) {
    metrics[EVAL_METRICS.collaborationGain] = all.collaboration_gain;
    metrics[EVAL_METRICS.passAt1Alone] = all['pass@1_alone'] ?? 0;
  }
  if (all.exec_cost !== null) metrics[EVAL_METRICS.execCost] = all.exec_cost;
  if (all.peak_memory !== null) metrics[EVAL_METRICS.peakMemory] = all.peak_memory;
  return { metrics, suites: reports };
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
