// How many chains of the examples world's space fit a set of input/output examples. Chains are
// counted by dynamic programming over their values on the example inputs: chains that agree
// on every input so far are one state with a count, so the space up to length 4 is counted in
// well under a second although it holds hundreds of thousands of chains.
import { LIST_STEPS, REDUCE_STEPS, type StepInstance } from './space';

export interface ExamplePair {
  input: number[];
  output: number[] | number;
}

interface State {
  values: unknown[];
  count: number;
  /** One chain reaching this state (the first found), for error messages and tests. */
  chain: StepInstance[];
}

export interface FitCount {
  count: number;
  /** Up to a few fitting chains, shortest first. */
  chains: StepInstance[][];
}

/** Every chain of length 1..maxLength (list steps, optionally one reduction last) that maps each input to its output. */
export function countFittingChains(examples: readonly ExamplePair[], maxLength: number): FitCount {
  const target = JSON.stringify(examples.map((e) => e.output));
  let level = new Map<string, State>([
    ['', { values: examples.map((e) => e.input), count: 1, chain: [] }],
  ]);
  let count = 0;
  const chains: StepInstance[][] = [];
  const fitted = (state: State, inst: StepInstance, key: string) => {
    if (key !== target) return;
    count += state.count;
    if (chains.length < 4) chains.push([...state.chain, inst]);
  };
  for (let length = 1; length <= maxLength; length++) {
    const next = new Map<string, State>();
    for (const state of level.values()) {
      for (const inst of REDUCE_STEPS) {
        const values = state.values.map((v) => inst.step.apply(v, inst.params));
        fitted(state, inst, JSON.stringify(values));
      }
      for (const inst of LIST_STEPS) {
        const values = state.values.map((v) => inst.step.apply(v, inst.params));
        const key = JSON.stringify(values);
        fitted(state, inst, key);
        if (length === maxLength) continue;
        const seen = next.get(key);
        if (seen) seen.count += state.count;
        else next.set(key, { values, count: state.count, chain: [...state.chain, inst] });
      }
    }
    level = next;
  }
  return { count, chains };
}
