// Planner → Coder evaluation on a task list, judged by the sandbox: pass@1 (greedy),
// optionally pass@1 and pass@K over K sampled plan→code pairs, and the execution cost and
// peak memory of passing programs. Engine code: the caller supplies the sandbox.
import type { GPT } from '../model';
import { extractFunction } from '../rl/extractFunction';
import type { RunResult, Sandbox } from '../sandbox/types';
import { coderPrompt, completionText, plannerPrompt } from '../sft/format';
import type { Task } from '../tasks';
import type { CharTokenizer } from '../tokenizer';
import { KvCacheSampler } from './kvSampler';
import type { SampleOptions } from './types';

export interface EvalOptions {
  /** K sampled plan→code pairs per task for pass@K (1 = greedy only). */
  samples: number;
  temperature: number;
  seed: number;
  maxPlanTokens: number;
  maxCodeTokens: number;
  /** Share one model for both roles (role tokens in the prompts). */
  shared: boolean;
}

export const DEFAULT_EVAL: EvalOptions = {
  samples: 1,
  temperature: 0.8,
  seed: 1,
  maxPlanTokens: 200,
  maxCodeTokens: 320,
  shared: false,
};

export interface TierReport {
  tasks: number;
  'pass@1': number;
  /** Coder alone, given the task's reference plan (greedy): how much the Planner costs. */
  'pass@1_reference_plan': number;
  /** With samples > 1: mean pass rate of sampled pairs, and the unbiased pass@K (= any of K passed). */
  'pass@1_sampled'?: number;
  'pass@k'?: number;
  /** Fraction of greedy plans equal to one of the task's reference plans. */
  plan_exact: number;
  /** Fraction of greedy completions holding a complete function that the sandbox could parse. */
  valid_syntax: number;
  /** Mean QuickJS work and peak heap bytes of the passing greedy programs (null when none passed). */
  exec_cost: number | null;
  peak_memory: number | null;
}

export interface EvalReport {
  overall: TierReport;
  tiers: Record<string, TierReport>;
  examples: { id: string; tier: string; plan: string; code: string; passed: boolean }[];
}

export async function evaluateTasks(
  planner: GPT,
  coder: GPT,
  tok: CharTokenizer,
  tasks: Task[],
  sandbox: Sandbox,
  options: Partial<EvalOptions> = {},
): Promise<EvalReport> {
  const o = { ...DEFAULT_EVAL, ...options };
  const plannerSampler = new KvCacheSampler(planner, tok.padId);
  const coderSampler = new KvCacheSampler(coder, tok.padId);
  const greedy = (max: number): SampleOptions => ({
    maxNewTokens: max,
    temperature: 0,
    topK: 0,
    seed: o.seed,
    stopId: tok.eosId,
  });

  const planOf = async (list: Task[], opts: SampleOptions) =>
    (
      await plannerSampler.sample(
        list.map((t) => plannerPrompt(tok, t.statement, o.shared)),
        opts,
      )
    ).tokens.map((ids) => completionText(tok, ids));
  const codeOf = async (list: Task[], plans: string[], opts: SampleOptions) =>
    (
      await coderSampler.sample(
        list.map((t, i) => coderPrompt(tok, t.statement, plans[i]!, o.shared)),
        opts,
      )
    ).tokens.map((ids) => completionText(tok, ids));
  const judge = (list: Task[], codes: string[]) =>
    sandbox.run(
      list.map((t, i) => {
        const extracted = extractFunction(codes[i]!, t.entryPoint);
        return {
          kind: 'cases' as const,
          id: `${t.id}#${i}`,
          code: extracted.formatOk ? extracted.code : codes[i]!,
          entryPoint: t.entryPoint,
          tests: t.tests,
        };
      }),
    );

  const plans = await planOf(tasks, greedy(o.maxPlanTokens));
  const codes = await codeOf(tasks, plans, greedy(o.maxCodeTokens));
  const results = await judge(tasks, codes);
  const referencePlans = tasks.map((t) => t.strategies[0]!.plan);
  const refResults = await judge(
    tasks,
    await codeOf(tasks, referencePlans, greedy(o.maxCodeTokens)),
  );

  // K sampled plan→code pairs per task.
  let sampledPasses: number[] | null = null;
  if (o.samples > 1) {
    const repeated = tasks.flatMap((t) => Array.from({ length: o.samples }, () => t));
    const sampling = (max: number, seed: number): SampleOptions => ({
      maxNewTokens: max,
      temperature: o.temperature,
      topK: 0,
      seed,
      stopId: tok.eosId,
    });
    const sPlans = await planOf(repeated, sampling(o.maxPlanTokens, o.seed + 1));
    const sCodes = await codeOf(repeated, sPlans, sampling(o.maxCodeTokens, o.seed + 2));
    const sResults = await judge(repeated, sCodes);
    sampledPasses = tasks.map(
      (_, i) => sResults.slice(i * o.samples, (i + 1) * o.samples).filter((r) => r.passed).length,
    );
  }

  const report = (indices: number[]): TierReport => {
    const n = indices.length;
    const passing = indices.map((i) => results[i]!).filter((r) => r.passed);
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
    const tier: TierReport = {
      tasks: n,
      'pass@1': passing.length / n,
      'pass@1_reference_plan': indices.filter((i) => refResults[i]!.passed).length / n,
      plan_exact:
        indices.filter((i) => tasks[i]!.strategies.some((s) => s.plan === plans[i])).length / n,
      valid_syntax:
        indices.filter(
          (i) =>
            extractFunction(codes[i]!, tasks[i]!.entryPoint).formatOk &&
            !isSyntaxError(results[i]!),
        ).length / n,
      exec_cost: mean(passing.map((r) => r.cost.work)),
      peak_memory: mean(passing.map((r) => r.cost.peakBytes)),
    };
    if (sampledPasses) {
      tier['pass@1_sampled'] = indices.reduce((s, i) => s + sampledPasses![i]! / o.samples, 0) / n;
      tier['pass@k'] = indices.filter((i) => sampledPasses![i]! > 0).length / n;
    }
    return tier;
  };

  const byTier = new Map<string, number[]>();
  for (const [i, t] of tasks.entries()) byTier.set(t.tier, [...(byTier.get(t.tier) ?? []), i]);
  return {
    overall: report(tasks.map((_, i) => i)),
    tiers: Object.fromEntries([...byTier].sort().map(([tier, idx]) => [tier, report(idx)])),
    examples: tasks.map((t, i) => ({
      id: t.id,
      tier: t.tier,
      plan: plans[i]!,
      code: codes[i]!,
      passed: results[i]!.passed,
    })),
  };
}

function isSyntaxError(r: RunResult): boolean {
  return r.errorKind === 'syntax' || r.tests.some((t) => t.errorKind === 'syntax');
}
