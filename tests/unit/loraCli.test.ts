// Issue 23's check for LoRA on the tiny models, as a user runs it: `train -- grpo --steps 3
// --seed 3 --lora-rank 8` writes DIR/adapters/{planner,coder} in PEFT's layout with lora_B no
// longer zero and the bases bit for bit the shipped warm starts; `model logits --adapter` equals
// the independent numpy GPT-2 with PEFT's merge (tests/reference/hf_llama.py); --resume continues
// from the snapshot's adapters.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeSafetensors } from '../../src/model/safetensors';
import { referenceLogits } from './hf-reference';

const SHIPPED = 'public/checkpoints/tiny';

function node(args: string[]): string {
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 500_000 });
  expect(run.status, run.stderr.slice(-2000)).toBe(0);
  return run.stdout;
}

const tensors = (file: string) => decodeSafetensors(readFileSync(file)).tensors;

describe('train -- grpo --lora-rank 8', () => {
  it('writes PEFT adapters that learned, keeps the bases, and model logits --adapter matches numpy', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cli-lora-')), 'run');
    const train = ['scripts/cli.mjs', 'train', 'grpo'];
    node([
      ...train,
      '--steps',
      '3',
      '--seed',
      '3',
      '--lora-rank',
      '8',
      '--eval-every',
      '0',
      '--out',
      out,
    ]);
    for (const role of ['planner', 'coder']) {
      const dir = join(out, 'adapters', role);
      const config = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      expect(config).toMatchObject({
        peft_type: 'LORA',
        task_type: 'CAUSAL_LM',
        r: 8,
        lora_alpha: 16,
        fan_in_fan_out: true,
        target_modules: ['c_attn', 'c_proj', 'c_fc'],
        base_model_name_or_path: `${SHIPPED}/${role}`,
      });
      const adapter = tensors(join(dir, 'adapter_model.safetensors'));
      const a = adapter.get('base_model.model.transformer.h.0.attn.c_attn.lora_A.weight')!;
      const b = adapter.get('base_model.model.transformer.h.0.attn.c_attn.lora_B.weight')!;
      const base = tensors(join(SHIPPED, role, 'model.safetensors'));
      const [d, threeD] = base.get('transformer.h.0.attn.c_attn.weight')!.shape as [number, number];
      expect(a.shape).toEqual([8, d]);
      expect(b.shape).toEqual([threeD, 8]);
      const names = [...adapter.keys()];
      expect(
        names.every((n) =>
          /^base_model\.model\.transformer\.h\.\d+\.(attn\.c_attn|attn\.c_proj|mlp\.c_fc|mlp\.c_proj)\.lora_[AB]\.weight$/.test(
            n,
          ),
        ),
      ).toBe(true);
      // Every lora_B started at zero; after three steps they are not.
      const bs = names.filter((n) => n.endsWith('lora_B.weight'));
      expect(bs.some((n) => adapter.get(n)!.data.some((v) => v !== 0))).toBe(true);
      // The base is frozen: the run's checkpoint is the shipped warm start, bit for bit.
      const saved = tensors(join(out, 'checkpoints', role, 'model.safetensors'));
      for (const [name, t] of base) {
        const got = saved.get(name)!;
        expect(Buffer.from(got.data.buffer).equals(Buffer.from(t.data.buffer)), name).toBe(true);
      }
    }
    // The adapter applied by the lab's CLI against the independent numpy GPT-2.
    const adapter = join(out, 'adapters', 'coder');
    const model = ['scripts/cli.mjs', 'model', 'logits'];
    const text = 'function solve(xs) {';
    const lab = JSON.parse(
      node([...model, '--checkpoint', `${SHIPPED}/coder`, '--adapter', adapter, '--text', text]),
    ) as { ids: number[]; logits: number[] };
    const plain = JSON.parse(
      node([...model, '--checkpoint', `${SHIPPED}/coder`, '--text', text]),
    ) as { logits: number[] };
    const numpy = referenceLogits(`${SHIPPED}/coder`, lab.ids, adapter);
    const largest = Math.max(...numpy.map(Math.abs));
    const worst = Math.max(...lab.logits.map((v, i) => Math.abs(v - numpy[i]!)));
    expect(worst).toBeLessThan(1e-5 * largest);
    // …and the adapter is not a no-op.
    expect(Math.max(...lab.logits.map((v, i) => Math.abs(v - plain.logits[i]!)))).toBeGreaterThan(
      100 * worst,
    );
    // --resume continues from the snapshot's adapters: one more step moves them again.
    const before = readFileSync(join(adapter, 'adapter_model.safetensors'));
    node([...train, '--resume', out, '--steps', '4']);
    const after = readFileSync(join(adapter, 'adapter_model.safetensors'));
    expect(after.equals(before)).toBe(false);
    const lines = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => JSON.parse(l).step)).toEqual([1, 2, 3, 4]);
  }, 1_200_000);
});
