// The whole warm start from scratch, as engine code (no Node, no DOM): a fresh tokenizer,
// the Planner trained on statement → plan, then the Coder on statement + plan → code.
// The page's "train warm start from scratch" runs this in its engine Worker and
// `npm run warmstart` in Node, so a seed and step budget give the same models in both.
import type { AdamWState, GPT, LoadedCheckpoint, PresetName } from '../model';
import { createModel, type ModelRole, makeConfig, parameterCount } from '../model';
import { EXAMPLES_PLAN_DROPOUT, type Role } from '../rl/config';
import { createTaskSampler } from '../tasks';
import { generateExamplesTask } from '../tasks/examples/generate';
import { Rng } from '../tasks/random';
import { CharTokenizer, fitBpeTokenizer } from '../tokenizer';
import { BucketedBatches } from './batches';
import { type CoderViews, type ExampleFormat, taskExampleSource } from './taskExamples';
import { DEFAULT_SFT, runSft, type SftProgress } from './trainer';

export interface WarmStartOptions {
  preset: PresetName;
  seed: number;
  /** Time budget for both roles together … */
  minutes?: number;
  /** … or steps per role. */
  steps?: number;
  batchSize?: number;
  /** Share of the time budget that goes to the Planner (it trains first). */
  plannerShare?: number;
  /** One model for both roles, told apart by a role token. */
  shared?: boolean;
  /**
   * Only a Coder, on statement → code with an empty plan: the warm start of `single` mode's
   * baseline, so the comparison with CoRe measures collaboration, not the prompt format.
   */
  coderAlone?: boolean;
  /**
   * Only one model, on statement → plan <|code|> program: the warm start of `self-plan` mode's
   * baseline (one policy with the pair's token budget), in the Coder's place.
   */
  selfPlan?: boolean;
  /** BPE merges fitted on the train split (fitTaskTokenizer); 0: characters. Default 512. */
  merges?: number;
  /**
   * The task world: procedural (the default) or examples (tasks/examples/: signature and
   * input/output examples; its own tokenizer corpus, and Coder prompts with plan dropout and
   * signature-only statements, EXAMPLES_CODER_VIEWS).
   */
  taskSet?: 'procedural' | 'examples';
  /** Report progress every this many steps (the page wants it often, the CLI less). */
  logEvery?: number;
  onProgress?: (role: ModelRole, progress: SftProgress) => void;
  /** Called when a role starts training, with its parameter count. */
  onRoleStart?: (role: ModelRole, parameters: number) => void;
  shouldStop?: () => boolean;
  /** Go on from a warm start stopped part-way (a steps budget), from what onCheckpoint got. */
  resume?: WarmStartResume;
  /** Every this many steps of a role, onCheckpoint gets what resume needs. */
  checkpointEvery?: number;
  onCheckpoint?: (state: WarmStartResume) => Promise<void>;
}

/** Where a warm start stands: the role in training, its steps done, weights and Adam's moments. */
export interface WarmStartResume {
  role: ModelRole;
  step: number;
  model: GPT;
  tokenizer: CharTokenizer;
  optimizer: AdamWState;
  /** The roles it had trained to the end before this one. */
  finished: Partial<Record<ModelRole, LoadedCheckpoint>>;
}

const TIER_MIX = { L1: 1, L2: 2, L3: 2, L4: 1 };

/**
 * The shipped tokenizer's merges: 4× fewer tokens per task than characters, and its warm
 * start beat the character one on every suite (public/checkpoints/tiny/README.md).
 */
export const DEFAULT_MERGES = 512;

/** Tasks whose texts the BPE merges are fitted on: train split only, a fixed draw. */
const TOKENIZER_CORPUS = { tasks: 1500, seed: 20261201 };

/**
 * The lab's BPE tokenizer with `merges` merges, fitted on the statements, plans and programs
 * of a fixed draw of train-split tasks (every tier): the same merges on every machine, and
 * no validation, evaluation or held-out text shapes the vocabulary.
 */
export function fitTaskTokenizer(
  merges: number,
  taskSet: 'procedural' | 'examples' = 'procedural',
): CharTokenizer {
  const tasks =
    taskSet === 'examples'
      ? Array.from({ length: TOKENIZER_CORPUS.tasks }, (_, i) =>
          generateExamplesTask({ split: 'train', seed: TOKENIZER_CORPUS.seed }, i),
        )
      : createTaskSampler({
          mix: { L1: 1, L2: 1, L3: 1, L4: 1 },
          split: 'train',
          seed: TOKENIZER_CORPUS.seed,
        }).next(TOKENIZER_CORPUS.tasks);
  const texts = tasks.flatMap((task) => [
    task.statement,
    ...task.strategies.flatMap((strategy) => [strategy.plan, strategy.code]),
  ]);
  return fitBpeTokenizer(texts, merges);
}

/**
 * The examples world's Coder: 10% of its examples without a plan (the planDropout default)
 * and 20% with the signature alone for a statement (what `coderSees` plan shows it).
 */
export const EXAMPLES_CODER_VIEWS: CoderViews = {
  planDropout: EXAMPLES_PLAN_DROPOUT,
  signatureOnly: 0.2,
};

/** The training tasks a warm start draws, as a stream. */
function trainTaskStream(taskSet: 'procedural' | 'examples', seed: number) {
  if (taskSet === 'examples') {
    let index = 0;
    return {
      next: (n: number) =>
        Array.from({ length: n }, () => generateExamplesTask({ split: 'train', seed }, index++)),
    };
  }
  return createTaskSampler({ mix: TIER_MIX, split: 'train', seed });
}

export async function warmStartModels(
  options: WarmStartOptions,
): Promise<{ planner: LoadedCheckpoint; coder: LoadedCheckpoint }> {
  const { preset, seed, minutes, steps, batchSize = 16, plannerShare = 0.35 } = options;
  if (minutes === undefined && steps === undefined)
    throw new Error('warm start: give minutes or steps');
  const merges = options.merges ?? DEFAULT_MERGES;
  const taskSet = options.taskSet ?? 'procedural';
  const tokenizer = merges > 0 ? fitTaskTokenizer(merges, taskSet) : new CharTokenizer();
  if (options.resume && options.resume.tokenizer.vocabSize !== tokenizer.vocabSize) {
    throw new Error(
      'warm start: the resumed state was made with another tokenizer (--merges, --task-set)',
    );
  }
  const prng = new Rng(seed);
  const format: ExampleFormat = options.selfPlan
    ? 'self-plan'
    : options.coderAlone
      ? 'coder-alone'
      : 'roles';

  const finished: Partial<Record<ModelRole, LoadedCheckpoint>> = {};
  const trainRole = async (role: ModelRole, share: number): Promise<LoadedCheckpoint> => {
    const config = makeConfig(preset, tokenizer.vocabSize, role);
    // Drawn in this order whatever is resumed, so a resumed run draws what the whole one did.
    const forks = { model: prng.fork(), tasks: prng.fork(), source: prng.fork() };
    const batchesFork = prng.fork();
    const done = options.resume?.finished[role];
    if (done) {
      finished[role] = done;
      return done;
    }
    const resume = options.resume?.role === role ? options.resume : undefined;
    const model = resume ? resume.model : createModel(config, forks.model);
    const tasks = trainTaskStream(taskSet, forks.tasks);
    const roles: Role[] = role === 'shared' ? ['planner', 'coder'] : [role];
    const source = taskExampleSource((n) => tasks.next(n), tokenizer, roles, forks.source, {
      shared: role === 'shared',
      format,
      coderViews: taskSet === 'examples' && format === 'roles' ? EXAMPLES_CODER_VIEWS : undefined,
    });
    options.onRoleStart?.(role, parameterCount(config));
    const batches = new BucketedBatches(source, batchSize, batchesFork, 8, config.nCtx);
    const onCheckpoint = options.onCheckpoint;
    const result = await runSft(
      model,
      () => batches.next(),
      {
        ...DEFAULT_SFT,
        padId: tokenizer.padId,
        logEvery: options.logEvery ?? DEFAULT_SFT.logEvery,
        ...(steps !== undefined ? { steps } : { minutes: (minutes ?? 0) * share }),
        ...(options.shouldStop ? { shouldStop: options.shouldStop } : {}),
        ...(resume ? { resume: { step: resume.step, optimizer: resume.optimizer } } : {}),
        ...(onCheckpoint && options.checkpointEvery
          ? {
              checkpointEvery: options.checkpointEvery,
              onCheckpoint: (step: number, optimizer: AdamWState) =>
                onCheckpoint({
                  role,
                  step,
                  model,
                  tokenizer,
                  optimizer,
                  finished: { ...finished },
                }),
            }
          : {}),
      },
      (progress) => options.onProgress?.(role, progress),
    );
    const selfPlanFormat = format === 'self-plan' ? { format } : undefined;
    const world =
      taskSet === 'examples'
        ? { taskSet, ...(selfPlanFormat ?? { coderViews: EXAMPLES_CODER_VIEWS }) }
        : { mix: TIER_MIX, ...selfPlanFormat };
    const trained = { model, tokenizer, lab: { seed, sft: { ...result, batchSize, ...world } } };
    finished[role] = trained;
    return trained;
  };

  if (format !== 'roles') {
    const coder = await trainRole('coder', 1);
    return { planner: coder, coder };
  }
  if (options.shared) {
    const both = await trainRole('shared', 1);
    return { planner: both, coder: both };
  }
  const planner = await trainRole('planner', plannerShare);
  const coder = await trainRole('coder', 1 - plannerShare);
  return { planner, coder };
}
