import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG } from '../../src/engine/runConfig';
import { configDiff, fieldLabel, flattenConfig } from '../../src/ui/runs/configDiff';

describe('config diff for the runs table', () => {
  it('flattens nested config to dotted paths', () => {
    const flat = flattenConfig(DEFAULT_RUN_CONFIG);
    expect(flat['grpo.epsilonLow']).toBe(0.2);
    expect(flat['grpo.rewardWeights.efficiency']).toBe(0.25);
    expect(flat['tierMix.L5']).toBe(1);
    expect(flat.preset).toBe('tiny');
  });

  it('lists only the fields that differ, in config order', () => {
    const a = structuredClone(DEFAULT_RUN_CONFIG);
    const b = structuredClone(DEFAULT_RUN_CONFIG);
    const c = structuredClone(DEFAULT_RUN_CONFIG);
    b.grpo.beta = 0;
    c.grpo.rewardWeights.efficiency = 0.5;
    c.grpo.beta = 0.04;
    const diff = configDiff([a, b, c]);
    expect(diff.fields).toEqual(['grpo.beta', 'grpo.rewardWeights.efficiency']);
    expect(diff.values[1]?.['grpo.beta']).toBe(0);
  });

  it('has no columns for one run or identical runs; a missing field counts as different', () => {
    expect(configDiff([DEFAULT_RUN_CONFIG]).fields).toEqual([]);
    expect(configDiff([DEFAULT_RUN_CONFIG, structuredClone(DEFAULT_RUN_CONFIG)]).fields).toEqual(
      [],
    );
    const withoutL5 = structuredClone(DEFAULT_RUN_CONFIG);
    delete withoutL5.tierMix.L5;
    expect(configDiff([DEFAULT_RUN_CONFIG, withoutL5]).fields).toEqual(['tierMix.L5']);
  });

  it('labels fields briefly', () => {
    expect(fieldLabel('grpo.epsilonLow')).toBe('epsilonLow');
    expect(fieldLabel('grpo.rewardWeights.efficiency')).toBe('w.efficiency');
    expect(fieldLabel('tierMix.L4')).toBe('tierMix.L4');
  });
});
