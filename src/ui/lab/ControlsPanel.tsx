import type { ReactNode } from 'react';
import type { RunConfig } from '../../engine/types';
import type { GrpoConfig } from '../../rl/config';
import type { RewardWeights } from '../../rl/rewards';
import { writeConfigToUrl } from '../engineClient';
import { useLabStore } from '../state/labStore';

const TIERS = ['L1', 'L2', 'L3', 'L4'] as const;

/** The numeric GRPO settings, in the order the panel shows them (name = URL key). */
const GRPO_NUMBERS: {
  label: string;
  name: string;
  key: keyof GrpoConfig;
  step?: number;
  min?: number;
  integer?: boolean;
}[] = [
  { label: 'Tasks per step', name: 'tasks', key: 'tasksPerStep', min: 1, integer: true },
  { label: 'N plans per task', name: 'n', key: 'plansPerTask', min: 1, integer: true },
  { label: 'M programs per plan', name: 'm', key: 'programsPerPlan', min: 2, integer: true },
  { label: 'β (KL)', name: 'beta', key: 'beta', step: 0.01, min: 0 },
  { label: 'ε low', name: 'epsl', key: 'epsilonLow', step: 0.05, min: 0 },
  { label: 'ε high', name: 'epsh', key: 'epsilonHigh', step: 0.05, min: 0 },
  { label: 'Learning rate', name: 'lr', key: 'learningRate', step: 0.00001, min: 0 },
  { label: 'Temperature', name: 'temp', key: 'temperature', step: 0.1, min: 0.1 },
];

const WEIGHT_NUMBERS: { label: string; name: string; key: keyof RewardWeights; step: number }[] = [
  { label: 'Reward: pass weight', name: 'wpass', key: 'passFraction', step: 0.1 },
  { label: 'Reward: λ efficiency', name: 'weff', key: 'efficiency', step: 0.05 },
  { label: 'Reward: format penalty', name: 'wfmt', key: 'formatPenalty', step: 0.1 },
];

function setConfig(update: (config: RunConfig) => RunConfig) {
  const config = update(useLabStore.getState().config);
  useLabStore.setState({ config });
  writeConfigToUrl(config);
}

function setGrpo<K extends keyof GrpoConfig>(key: K, value: GrpoConfig[K]) {
  setConfig((config) => ({ ...config, grpo: { ...config.grpo, [key]: value } }));
}

function setGrpoNumber(key: keyof GrpoConfig, value: number) {
  setConfig((config) => ({ ...config, grpo: { ...config.grpo, [key]: value } }));
}

function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: string }) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is passed in as a child
    <label className="field" title={hint}>
      <span>{label}</span>
      {children}
    </label>
  );
}

function NumberInput({
  value,
  onChange,
  step,
  min,
  max,
  name,
}: {
  value: number;
  onChange: (value: number) => void;
  step?: number;
  min?: number;
  max?: number;
  name: string;
}) {
  return (
    <input
      type="number"
      name={name}
      value={value}
      step={step ?? 1}
      min={min}
      max={max}
      onChange={(event) => {
        const next = Number(event.target.value);
        if (event.target.value !== '' && Number.isFinite(next)) onChange(next);
      }}
    />
  );
}

/** Every setting of the next run. Changes go to the URL at once and apply on Reset. */
export function ControlsPanel() {
  const config = useLabStore((state) => state.config);
  const grpo = config.grpo;
  const weights = grpo.rewardWeights;
  return (
    <aside className="controls" aria-label="Run settings">
      <h2>Run settings</h2>
      <Field label="Model preset">
        <select
          name="preset"
          value={config.preset}
          onChange={(e) =>
            setConfig((c) => ({ ...c, preset: e.target.value as RunConfig['preset'] }))
          }
        >
          <option value="tiny">tiny (~0.1M, CPU minutes)</option>
          <option value="small">small (~1M)</option>
          <option value="base">base (~5M, real GPU)</option>
        </select>
      </Field>
      <Field
        label="Mode"
        hint="core: both roles learn; single: the Coder alone; frozen-planner: only the Coder learns"
      >
        <select
          name="mode"
          value={grpo.mode}
          onChange={(e) => setGrpo('mode', e.target.value as GrpoConfig['mode'])}
        >
          <option value="core">core (Planner + Coder)</option>
          <option value="single">single (Coder alone)</option>
          <option value="frozen-planner">frozen-planner</option>
        </select>
      </Field>
      <fieldset className="tiers">
        <legend>Task tiers (weights)</legend>
        {TIERS.map((tier) => (
          <Field key={tier} label={tier}>
            <NumberInput
              name={`tier-${tier}`}
              value={config.tierMix[tier] ?? 0}
              min={0}
              onChange={(value) =>
                setConfig((c) => ({ ...c, tierMix: { ...c.tierMix, [tier]: value } }))
              }
            />
          </Field>
        ))}
      </fieldset>
      {GRPO_NUMBERS.map((field) => (
        <Field key={field.name} label={field.label}>
          <NumberInput
            name={field.name}
            value={grpo[field.key] as number}
            step={field.step}
            min={field.min}
            onChange={(v) => setGrpoNumber(field.key, field.integer ? Math.floor(v) : v)}
          />
        </Field>
      ))}
      <Field label="Loss aggregation">
        <select
          name="loss"
          value={grpo.lossType}
          onChange={(e) => setGrpo('lossType', e.target.value as GrpoConfig['lossType'])}
        >
          <option value="grpo">grpo</option>
          <option value="dapo">dapo</option>
          <option value="dr_grpo">dr_grpo</option>
        </select>
      </Field>
      {WEIGHT_NUMBERS.map((field) => (
        <Field key={field.name} label={field.label}>
          <NumberInput
            name={field.name}
            value={weights[field.key]}
            step={field.step}
            onChange={(v) => setGrpo('rewardWeights', { ...weights, [field.key]: v })}
          />
        </Field>
      ))}
      <Field label="Seed">
        <NumberInput
          name="seed"
          value={grpo.seed}
          min={0}
          onChange={(v) => setGrpo('seed', Math.floor(v))}
        />
      </Field>
    </aside>
  );
}
