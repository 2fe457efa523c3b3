// The task schema shared by generators, suites, user files and the trainers.

// L1–L4 grow in difficulty and are what the warm start learns from; L5 holds compositions of
// known steps in shapes (order and length) no warm start saw: the tier GRPO has to learn.
export type Tier = 'L1' | 'L2' | 'L3' | 'L4' | 'L5';
export const TIERS: readonly Tier[] = ['L1', 'L2', 'L3', 'L4', 'L5'];

export type Split = 'train' | 'validation' | 'heldout';
export const SPLITS: readonly Split[] = ['train', 'validation', 'heldout'];

export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** 'direct' for one-way tasks; L4 tasks carry both 'naive' and 'efficient'. */
export type StrategyName = 'direct' | 'naive' | 'efficient';
export const STRATEGY_NAMES: readonly StrategyName[] = ['direct', 'naive', 'efficient'];

export interface Strategy {
  name: StrategyName;
  /** Numbered steps, one per line: "1. keep the even numbers\n2. add them up". */
  plan: string;
  /** JavaScript defining the task's entry point. */
  code: string;
}

export interface TaskTest {
  args: JsonValue[];
  expected: JsonValue;
}

export interface Task {
  id: string;
  family: string;
  tier: Tier;
  statement: string;
  entryPoint: string;
  arity: number;
  tests: TaskTest[];
  /**
   * The input/output examples a statement shows (the examples world, tasks/examples/): the
   * statement is made of them, and they are also the first of `tests`.
   */
  examples?: TaskTest[];
  strategies: Strategy[];
  /** Indices into `tests` of the large inputs where the algorithm's cost shows. */
  efficiencyTests: number[];
  /** Step signature: the step kinds the task composes, in order (family name for atomic ones). */
  steps: string[];
}

/** What a family generator produces; the generator adds id, family and tier. */
export type TaskDraft = Omit<Task, 'id' | 'family' | 'tier'>;
