// Plan dropout: which of a step's plans (task-major) the Coder does not get, so that writing
// from an empty plan stays a prompt it knows (the evaluation's "no plan" figure is then fair).
import { Rng } from '../tasks/random';

export function droppedPlans(count: number, share: number, seed: number): boolean[] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => rng.chance(share));
}
