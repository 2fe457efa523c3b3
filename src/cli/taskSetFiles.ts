// The task set files a run needs, read from public/ (the page's Worker fetches the same files):
// nothing for a procedural run, the examples world's suites for an examples run, MBXP's two
// splits for an mbxp run.
import { readFile } from 'node:fs/promises';
import { type Suites, taskSetOf } from '../engine/taskSets';
import type { RunConfig } from '../engine/types';
import { loadSuite } from '../tasks';
import { EXAMPLES_SUITES } from '../tasks/examples/suites';
import { loadTaskSetSplit, mbxpFile, type TaskSetSplits } from '../tasks/mbxp/taskSet';

export async function readTaskSets(
  config: RunConfig,
): Promise<{ mbxp?: TaskSetSplits; examples?: Suites }> {
  if (taskSetOf(config) === 'examples') {
    const examples: Suites = {};
    for (const spec of EXAMPLES_SUITES) {
      const path = `public/${spec.file}`;
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        throw new Error(`${path}: cannot read it (${(error as NodeJS.ErrnoException).code})`);
      }
      examples[spec.name] = loadSuite(text).tasks;
    }
    return { examples };
  }
  if (taskSetOf(config) !== 'mbxp') return {};
  const read = async (split: 'train' | 'validation') => {
    const path = `public/${mbxpFile(split)}`;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new Error(`${path}: cannot read it (${(error as NodeJS.ErrnoException).code})`);
    }
    return loadTaskSetSplit(text, split);
  };
  return { mbxp: { train: await read('train'), validation: await read('validation') } };
}
