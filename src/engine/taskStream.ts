// The training task stream of a run: the seeded generator's stream for the run's tier mix,
// optionally filtered to some families. Its position is part of a snapshot, so a resumed
// run draws exactly the tasks the uninterrupted run would have drawn. With `taskPoolSize`
// the run cycles through a fixed pool of the stream's first tasks (small, repeatable studies).
import { generateTask, type Task } from '../tasks';
import type { RunConfig } from './types';

export class TaskStream {
  private index: number;
  private pool: Task[] | null = null;

  constructor(
    private readonly config: RunConfig,
    start = 0,
  ) {
    this.index = start;
  }

  get position(): number {
    return this.index;
  }

  next(count: number): Task[] {
    const poolSize = this.config.taskPoolSize;
    if (poolSize) {
      this.pool ??= this.draw(poolSize, 0).tasks;
      const pool = this.pool;
      const start = this.index;
      this.index += count;
      return Array.from({ length: count }, (_, i) => pool[(start + i) % pool.length] as Task);
    }
    const drawn = this.draw(count, this.index);
    this.index = drawn.next;
    return drawn.tasks;
  }

  /** `count` tasks of the (filtered) stream from generator index `from`. */
  private draw(count: number, from: number): { tasks: Task[]; next: number } {
    let index = from;
    const families = this.config.taskFamilies;
    const options = {
      mix: this.config.tierMix,
      split: 'train' as const,
      seed: this.config.grpo.seed,
    };
    const tasks: Task[] = [];
    // A family filter skips non-matching tasks; the bound catches a filter that matches nothing.
    for (let tries = 0; tasks.length < count; tries++) {
      if (tries > 10_000 * count) {
        throw new Error(`no training task of families ${families?.join(', ')} in tiers of the mix`);
      }
      const task = generateTask(options, index++);
      if (!families || families.includes(task.family)) tasks.push(task);
    }
    return { tasks, next: index };
  }
}

/** A 32-bit seed for one (run seed, step, stream) triple: samplers are seeded per step. */
export function stepSeed(seed: number, step: number, stream: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (step + 0x632be59b), 0xc2b2ae35) >>> 0;
  h = Math.imul(h ^ (stream + 0x27d4eb2f), 0x165667b1) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
