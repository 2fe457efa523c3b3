// The independent numpy implementation of Hugging Face's semantics (tests/reference/hf_llama.py),
// run once per call: every test that checks the lab's numbers against it goes through here.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const REFERENCE = join(__dirname, '../reference/hf_llama.py');

/** The reference's JSON answer for a checkpoint folder and its flags (`--encode TEXT`, `--ids …`). */
export function runReference(
  checkpoint: string,
  args: readonly string[],
): { logits?: number[]; ids?: number[] } {
  return JSON.parse(
    execFileSync('python3', [REFERENCE, checkpoint, ...args], {
      encoding: 'utf8',
      // The 0.5B shape's vocabulary: 151,936 logits as JSON.
      maxBuffer: 1 << 26,
    }),
  );
}

/** The last position's logits of `ids` under the checkpoint (with a PEFT adapter merged, if given). */
export function referenceLogits(checkpoint: string, ids: readonly number[], adapter?: string) {
  const args = ['--ids', ids.join(','), ...(adapter ? ['--adapter', adapter] : [])];
  return runReference(checkpoint, args).logits as number[];
}

/** The ids the checkpoint's own tokenizer gives `text`, by the reference's BPE. */
export function referenceIds(checkpoint: string, text: string): number[] {
  return runReference(checkpoint, ['--encode', text]).ids as number[];
}
