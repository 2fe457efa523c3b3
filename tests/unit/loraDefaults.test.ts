// The defaults that depend on the kind of run (issue 33), through each door a user sets a run
// by: a link, the command line's flags, and a change on the page (followKindDefaults, which the
// page's applyConfig runs). A base alone means LoRA rank 8; a LoRA run whose learning rate
// nobody set gets LoRA's rate; a rate someone set stays; full fine-tuning's defaults do not move.
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../src/cli/flags';
import { runConfigFromSettingFlags, settingFlags } from '../../src/cli/settingFlags';
import {
  BASE_LORA_LEARNING_RATE,
  DEFAULT_BASE_LORA_RANK,
  describeLearningRate,
  followKindDefaults,
  TINY_LORA_LEARNING_RATE,
} from '../../src/engine/loraDefaults';
import { DEFAULT_RUN_CONFIG, decodeRunConfig, encodeRunConfig } from '../../src/engine/runConfig';
import { defaultRunConfig } from '../../src/engine/session';
import type { RunConfig } from '../../src/engine/types';

const FULL_RATE = DEFAULT_RUN_CONFIG.grpo.learningRate;
const decode = (query: string) => decodeRunConfig(new URLSearchParams(query));
const fromFlags = (argv: string[]) =>
  runConfigFromSettingFlags(parseFlags(settingFlags(), argv).flags, defaultRunConfig());

describe('a link', () => {
  it('with a base and no rank trains rank-8 adapters at the base’s LoRA rate', () => {
    const { config, problems } = decode('base=org/model');
    expect(problems).toEqual([]);
    expect(config.loraRank).toBe(DEFAULT_BASE_LORA_RANK);
    expect(config.loraAlpha).toBeUndefined(); // 16, loraSettings.ts' default
    expect(config.grpo.learningRate).toBe(BASE_LORA_LEARNING_RATE);
    // And writes back as it came: rank 8 and the rate are this kind's defaults.
    expect(encodeRunConfig(config).toString()).toBe('base=org%2Fmodel');
  });

  it('with LoRA on the lab’s models and no rate takes their LoRA rate; a rate given stays', () => {
    expect(decode('lora=8').config.grpo.learningRate).toBe(TINY_LORA_LEARNING_RATE);
    const given = decode(`lora=8&lr=${FULL_RATE}`).config;
    expect(given.grpo.learningRate).toBe(FULL_RATE);
    expect(decode(encodeRunConfig(given).toString()).config).toEqual(given);
    expect(decode('lora=4&base=org/model').config.grpo.learningRate).toBe(BASE_LORA_LEARNING_RATE);
  });

  it('with a base and lora=0 names the refusal in words', () => {
    const { problems } = decode('base=org/model&lora=0');
    expect(problems).toEqual([
      'lora=0 (loraRank must be > 0 with a base model: every role trains a LoRA adapter over the frozen base (full fine-tuning of a pretrained model does not fit))',
    ]);
  });

  it('without LoRA keeps full fine-tuning’s defaults, byte for byte', () => {
    expect(decode('').config).toEqual(DEFAULT_RUN_CONFIG);
    expect(decode('seed=3').config.grpo.learningRate).toBe(FULL_RATE);
    expect(encodeRunConfig(DEFAULT_RUN_CONFIG).toString()).toBe('');
  });
});

describe('the command line', () => {
  it('--base alone means rank 8 at the base’s rate; --lora-rank without --learning-rate, LoRA’s rate', () => {
    const base = fromFlags(['--base', 'some/folder']);
    expect(base.loraRank).toBe(DEFAULT_BASE_LORA_RANK);
    expect(base.grpo.learningRate).toBe(BASE_LORA_LEARNING_RATE);
    expect(fromFlags(['--lora-rank', '8']).grpo.learningRate).toBe(TINY_LORA_LEARNING_RATE);
    expect(fromFlags(['--lora-rank', '8', '--lr', '5e-4']).grpo.learningRate).toBe(5e-4);
    expect(fromFlags(['--seed', '1'])).toEqual(defaultRunConfig({ grpo: { seed: 1 } }));
    expect(() => fromFlags(['--base', 'some/folder', '--lora-rank', '0'])).toThrow(
      /^--lora-rank 0: loraRank must be > 0 with a base model/,
    );
  });
});

describe('a change on the page', () => {
  const full: RunConfig = DEFAULT_RUN_CONFIG;
  it('choosing a base brings LoRA’s rate; going back brings full fine-tuning’s', () => {
    const withBase = followKindDefaults(full, { ...full, base: 'org/model', loraRank: 8 });
    expect(withBase.grpo.learningRate).toBe(BASE_LORA_LEARNING_RATE);
    const { base: _base, ...lab } = withBase;
    const back = followKindDefaults(withBase, lab);
    expect(back.loraRank).toBeUndefined();
    expect(back.grpo.learningRate).toBe(FULL_RATE);
  });

  it('a LoRA rank typed brings the lab’s LoRA rate; a rate the user set stays', () => {
    const lora = followKindDefaults(full, { ...full, loraRank: 8 });
    expect(lora.grpo.learningRate).toBe(TINY_LORA_LEARNING_RATE);
    const own = { ...full, grpo: { ...full.grpo, learningRate: 3e-4 } };
    expect(followKindDefaults(own, { ...own, loraRank: 8 }).grpo.learningRate).toBe(3e-4);
    // The change itself sets the rate: it stays, whatever the kind.
    const typed = followKindDefaults(lora, { ...lora, grpo: { ...lora.grpo, learningRate: 5e-4 } });
    expect(typed.grpo.learningRate).toBe(5e-4);
  });

  it('says which rate is in force and why', () => {
    expect(describeLearningRate(full)).toMatch(
      /^learning rate 0\.00015 \(full fine-tuning default/,
    );
    const lora = followKindDefaults(full, { ...full, loraRank: 8 });
    expect(describeLearningRate(lora)).toMatch(
      new RegExp(`^learning rate ${TINY_LORA_LEARNING_RATE} \\(LoRA default for the lab’s models`),
    );
    const own = { ...lora, grpo: { ...lora.grpo, learningRate: 5e-4 } };
    expect(describeLearningRate(own)).toBe(
      `learning rate 0.0005 (set for this run; the LoRA default for the lab’s models is ${TINY_LORA_LEARNING_RATE})`,
    );
  });
});
