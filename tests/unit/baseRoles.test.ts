// GRPO over a pretrained base (issue 23): one frozen Llama-family base, each role its own LoRA
// adapter over it. In process: an update moves the Coder's adapter only (the base bit for bit,
// Adam's moments the adapter's, the Planner's adapter untouched), the adapter written in PEFT's
// layout loads through `model logits --adapter` to the numpy reference's logits. As a user runs
// it: `train -- grpo --base <random Qwen2 folder> --lora-rank 4 --task-set mbxp --steps 2` on
// wasm completes with every per-role metric, judged MBXP samples carrying the rendered chat
// prompts, both adapters in PEFT's layout; --resume continues; --base alone trains rank-8
// adapters at the LoRA rate on procedural tasks; and a base with LoRA rank 0 is refused in words.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { putBaseAdapters } from '../../src/engine/baseRoles';
import { BASE_LORA_LEARNING_RATE, DEFAULT_BASE_LORA_RANK } from '../../src/engine/loraDefaults';
import type { FileMap } from '../../src/engine/types';
import { initBackend } from '../../src/gpu/backend';
import { hubCausalLM } from '../../src/model/families/hubModel';
import { decodeSafetensors } from '../../src/model/safetensors';
import { RoleTrainer } from '../../src/rl/trainer';
import { KvCacheSampler } from '../../src/rollout';
import { baseRolesOf } from './base-roles-fixtures';
import { writeChatFixture } from './hf-fixtures';
import { referenceLogits } from './hf-reference';

let root: string;
let base: string;

beforeAll(() => {
  ({ root, base } = writeChatFixture('base-roles-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const cli = (script: string, args: string[]) =>
  spawnSync('npm', ['run', '--silent', script, '--', ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });

function adapterTensors(dir: string) {
  return decodeSafetensors(readFileSync(join(dir, 'adapter_model.safetensors'))).tensors;
}

describe('role adapters over one base, in process', () => {
  it('an update moves the Coder adapter only; its PEFT files load to the reference logits', async () => {
    await initBackend('cpu');
    const { loaded, roles, coder, options } = await baseRolesOf(base);
    const before = new Map(
      [...loaded.model.weights].map(([name, t]) => [name, t.dataSync().slice()]),
    );
    const planner = roles.roles.get('planner')!;
    expect(coder.weights).toBe(loaded.model.weights);
    expect(planner.weights).toBe(loaded.model.weights);

    const prompt = roles.prompts.coder(
      { statement: 'Return the sum of a and b.', entryPoint: 'add' },
      '1. add them',
    );
    expect(loaded.tokenizer.decode(prompt)).toContain('<|im_start|>assistant\n');
    const drawn = await new KvCacheSampler(hubCausalLM(coder)).sample(
      [prompt, prompt, prompt, prompt],
      { maxNewTokens: 6, temperature: 1, topK: 0, seed: 4, stopId: roles.prompts.stopId },
    );
    const trainer = new RoleTrainer(coder, options);
    const update = await trainer.update(
      drawn.tokens.map((completion, i) => ({
        prompt,
        completion,
        oldLogProbs: drawn.logProbs[i]!,
        advantage: [1, -1, 0.5, -0.5][i]!,
      })),
    );
    expect(update.gradNorm).toBeGreaterThan(0);
    expect(update.metrics.kl).not.toBeNull();
    // Nothing but the adapter and its moments moved.
    for (const [name, t] of loaded.model.weights)
      expect(Buffer.from(t.dataSync().buffer).equals(Buffer.from(before.get(name)!.buffer))).toBe(
        true,
      );
    const state = await trainer.exportState();
    expect(state.reference).toBeNull();
    expect(state.moments.length).toBe(2 * 2 * 7 * 2);
    expect(state.moments.every((m) => /lora_[AB]\.weight\/[mv]$/.test(m.name))).toBe(true);
    const bNorm = (lora: typeof coder.lora) =>
      [...lora!.modules.values()].reduce((s, { b }) => s + tf.sum(tf.abs(b)).dataSync()[0]!, 0);
    expect(bNorm(coder.lora)).toBeGreaterThan(0);
    expect(bNorm(planner.lora)).toBe(0);

    // PEFT's layout, then the CLI's merge against the numpy reference.
    const files: FileMap = {};
    await putBaseAdapters(files, roles);
    const dir = join(root, 'coder-adapter');
    mkdirSync(dir, { recursive: true });
    for (const file of ['adapter_config.json', 'adapter_model.safetensors'])
      writeFileSync(join(dir, file), files[`adapters/coder/${file}`]!);
    const cfg = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
    expect(cfg).toMatchObject({ base_model_name_or_path: base, r: 4, fan_in_fan_out: false });
    expect([...adapterTensors(dir).keys()]).toContain(
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
    );
    trainer.dispose();

    const run = cli('model', [
      'logits',
      '--checkpoint',
      base,
      '--adapter',
      dir,
      '--backend',
      'cpu',
      '--text',
      'function add(a, b)',
    ]);
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as { ids: number[]; logits: number[] };
    const reference = (adapter?: string) => referenceLogits(base, out.ids, adapter);
    const ref = reference(dir);
    const scale = Math.max(...ref.map(Math.abs));
    const gap = (a: number[], b: number[]) => Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
    expect(gap(out.logits, ref) / scale).toBeLessThan(2e-3);
    // And the trained adapter is not a no-op: far from the base's logits.
    expect(gap(out.logits, reference()) / scale).toBeGreaterThan(1e-4);
  }, 240_000);
});

describe('train -- grpo --base', () => {
  // Random weights never stop: every sample runs to its cap, and what is checked here
  // (metrics, adapters, judged samples, resume) needs no long ones.
  const small = [
    ...['--tasks-per-step', '1', '--plans', '2', '--programs', '2', '--eval-every', '0'],
    ...['--plan-tokens', '16', '--program-tokens', '24'],
  ];

  it('runs two MBXP steps on wasm with every metric, both adapters, judged samples; --resume continues', () => {
    const out = join(root, 'run-mbxp');
    const args = ['grpo', '--base', base, '--lora-rank', '4', '--task-set', 'mbxp', '--steps', '2'];
    const run = cli('train', [...args, '--backend', 'wasm', ...small, '--out', out]);
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const metrics = readFileSync(join(out, 'metrics.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, number>);
    expect(metrics.map((m) => m.step)).toEqual([1, 2]);
    for (const m of metrics) {
      for (const role of ['planner', 'coder'])
        for (const name of [
          'reward',
          'reward_std',
          'loss',
          'entropy',
          'grad_norm',
          'completions/mean_length',
        ])
          expect(Number.isFinite(m[`${role}/${name}`]), `${role}/${name}`).toBe(true);
      expect(m['step_time/update']).toBeGreaterThan(0);
    }
    const samples = readFileSync(join(out, 'samples.jsonl'), 'utf8').trim().split('\n');
    for (const line of samples) {
      const group = JSON.parse(line);
      expect(group.family).toBe('mbxp');
      for (const plan of group.plans) {
        expect(plan.plannerPrompt).toContain('numbered plan');
        expect(plan.coderPrompt).toContain(`named \`${group.entryPoint}\``);
        for (const program of plan.programs) expect(program.total).toBe(group.tests.length);
      }
    }
    for (const role of ['planner', 'coder']) {
      const dir = join(out, 'adapters', role);
      const cfg = JSON.parse(readFileSync(join(dir, 'adapter_config.json'), 'utf8'));
      expect(cfg).toMatchObject({ peft_type: 'LORA', base_model_name_or_path: base, r: 4 });
      const names = [...adapterTensors(dir).keys()];
      expect(names).toContain('base_model.model.model.layers.1.mlp.down_proj.lora_B.weight');
      expect(names.length).toBe(2 * 2 * 7);
    }
    const resumed = cli('train', ['grpo', '--resume', out, '--steps', '3']);
    expect(resumed.status, resumed.stderr + resumed.stdout).toBe(0);
    const last = readFileSync(join(out, 'metrics.jsonl'), 'utf8').trim().split('\n').pop()!;
    expect(JSON.parse(last).step).toBe(3);
  }, 300_000);

  it('--base alone trains rank-8 adapters at the LoRA rate on procedural tasks; --lora-rank 0 is refused in words', () => {
    // No --lora-rank and no --learning-rate: a base means LoRA rank 8 (alpha 16) at the base's
    // LoRA default (issue 33), not a refusal and not full fine-tuning's rate.
    const out = join(root, 'run-procedural');
    const run = cli('train', [
      'grpo',
      '--base',
      base,
      '--steps',
      '1',
      '--backend',
      'wasm',
      ...small,
      '--out',
      out,
    ]);
    expect(run.status, run.stderr + run.stdout).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'metrics.jsonl'), 'utf8')).step).toBe(1);
    const { config } = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'));
    expect(config.loraRank).toBe(DEFAULT_BASE_LORA_RANK);
    expect(config.grpo.learningRate).toBe(BASE_LORA_LEARNING_RATE);
    for (const role of ['planner', 'coder']) {
      const cfg = JSON.parse(
        readFileSync(join(out, 'adapters', role, 'adapter_config.json'), 'utf8'),
      );
      expect(cfg).toMatchObject({ r: 8, lora_alpha: 16 });
    }

    const refused = cli('train', [
      'grpo',
      '--base',
      base,
      '--lora-rank',
      '0',
      '--steps',
      '1',
      '--out',
      join(root, 'no'),
    ]);
    expect(refused.status).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/--lora-rank 0: loraRank must be > 0 with a base model/);
  }, 300_000);
});
