// The training task stream of a run: the seeded generator's stream for the run's tier mix,
// optionally filtered to some families. Its position is part of a snapshot, so a resumed
// run draws exactly the tasks the uninterrupted run would have drawn. With `taskPoolSize`
// the run cycles through a fixed pool of the stream's first tasks (small, repeatable studies).
// With a fixed task list (an external task set's train split, e.g. MBXP) the stream is that
// list in a seeded order, reshuffled each time it has all been drawn. The examples world draws
// its own generator's train split (tasks/examples/generate.ts; the tier mix does not apply),
// each step family in turn by its family mix (tasks/examples/mix.ts).
import { generateTask, Rng, type Task } from '../tasks';
import { generateExamplesTask } from '../tasks/examples/generate';
import { FamilySchedule, TRAIN_FAMILY_MIX } from '../tasks/examples/mix';
import type { RunConfig } from './types';

export class TaskStream {
  private index: number;
  private pool: Task[] | null = null;
  /** The list's order in the epoch last drawn from. */
  private epoch: { number: number; order: number[] } | null = null;
  /** The examples world's family of each position (FamilySchedule). */
  private families: FamilySchedule | null = null;

  constructor(
    private readonly config: RunConfig,
    start = 0,
    /** Draw from these tasks instead of the generator (tier mix not used). */
    private readonly list: readonly Task[] | null = null,
  ) {
    this.index = start;
    if (list?.length === 0) throw new Error('the task set has no training task');
  }

  get position(): number {
    return this.index;
  }

  next(count: number): Task[] {
    const poolSize = this.config.taskPoolSize;
    const examples = this.config.taskSet === 'examples' && !this.list;
    if (poolSize) {
      this.pool ??= examples
        ? this.byFamily(this.familySchedule(0), poolSize)
        : this.draw(poolSize, 0).tasks;
      const pool = this.pool;
      const start = this.index;
      this.index += count;
      return Array.from({ length: count }, (_, i) => pool[(start + i) % pool.length] as Task);
    }
    if (examples) {
      this.families ??= this.familySchedule(this.index);
      this.index += count;
      return this.byFamily(this.families, count);
    }
    const drawn = this.draw(count, this.index);
    this.index = drawn.next;
    return drawn.tasks;
  }

  /** The examples world's family of each position from `start`: its mix, kept to the run's families. */
  private familySchedule(start: number): FamilySchedule {
    const only = this.config.taskFamilies;
    const mix = Object.fromEntries(
      Object.entries(TRAIN_FAMILY_MIX).filter(([f]) => !only || only.includes(`examples-${f}`)),
    );
    if (Object.keys(mix).length === 0) {
      throw new Error(`no training family of the examples world among ${only?.join(', ')}`);
    }
    return new FamilySchedule(mix, start);
  }

  /** The examples world's next `count` tasks: each one's family by the schedule, then its own stream. */
  private byFamily(schedule: FamilySchedule, count: number): Task[] {
    const seed = this.config.grpo.seed;
    return Array.from({ length: count }, () => {
      const { family, index } = schedule.next();
      return generateExamplesTask({ split: 'train', seed, family }, index);
    });
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
      const task = this.list ? this.fromList(index++) : generateTask(options, index++);
      if (!families || families.includes(task.family)) tasks.push(task);
    }
    return { tasks, next: index };
  }

  /** Task i of a fixed list's stream: epoch ⌊i / n⌋'s seeded shuffle, position i mod n. */
  private fromList(i: number): Task {
    const list = this.list as readonly Task[];
    const number = Math.floor(i / list.length);
    if (this.epoch?.number !== number) {
      const order = Rng.derive(this.config.grpo.seed, 'task-list', number).shuffle(
        list.map((_, k) => k),
      );
      this.epoch = { number, order };
    }
    return list[this.epoch.order[i % list.length] as number] as Task;
  }
}

/** A 32-bit seed for one (run seed, step, stream) triple: samplers are seeded per step. */
export function stepSeed(seed: number, step: number, stream: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (step + 0x632be59b), 0xc2b2ae35) >>> 0;
  h = Math.imul(h ^ (stream + 0x27d4eb2f), 0x165667b1) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
