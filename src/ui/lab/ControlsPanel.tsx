import type { ReactNode } from 'react';
import type { RunConfig } from '../../engine/types';
import type { GrpoConfig } from '../../rl/config';
import { writeConfigToUrl } from '../engineClient';
import { useLabStore } from '../state/labStore';

const TIERS = ['L1', 'L2', 'L3', 'L4'] as const;

function setConfig(update: (config: RunConfig) => RunConfig) {
  const config = update(useLabStore.getState().config);
  useLabStore.setState({ config });
  writeConfigToUrl(config);
}

function setGrpo<K extends keyof GrpoConfig>(key: K, value: GrpoConfig[K]) {
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
      <Field label="Tasks per step">
        <NumberInput
          name="tasks"
          value={grpo.tasksPerStep}
          min={1}
          onChange={(v) => setGrpo('tasksPerStep', v)}
        />
      </Field>
      <Field label="N plans per task">
        <NumberInput
          name="n"
          value={grpo.plansPerTask}
          min={1}
          onChange={(v) => setGrpo('plansPerTask', v)}
        />
      </Field>
      <Field label="M programs per plan">
        <NumberInput
          name="m"
          value={grpo.programsPerPlan}
          min={2}
          onChange={(v) => setGrpo('programsPerPlan', v)}
        />
      </Field>
      <Field label="β (KL)">
        <NumberInput
          name="beta"
          value={grpo.beta}
          step={0.01}
          min={0}
          onChange={(v) => setGrpo('beta', v)}
        />
      </Field>
      <Field label="ε low">
        <NumberInput
          name="epsl"
          value={grpo.epsilonLow}
          step={0.05}
          min={0}
          onChange={(v) => setGrpo('epsilonLow', v)}
        />
      </Field>
      <Field label="ε high">
        <NumberInput
          name="epsh"
          value={grpo.epsilonHigh}
          step={0.05}
          min={0}
          onChange={(v) => setGrpo('epsilonHigh', v)}
        />
      </Field>
      <Field label="Learning rate">
        <NumberInput
          name="lr"
          value={grpo.learningRate}
          step={0.00001}
          min={0}
          onChange={(v) => setGrpo('learningRate', v)}
        />
      </Field>
      <Field label="Temperature">
        <NumberInput
          name="temp"
          value={grpo.temperature}
          step={0.1}
          min={0.1}
          onChange={(v) => setGrpo('temperature', v)}
        />
      </Field>
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
      <Field label="Reward: pass weight">
        <NumberInput
          name="wpass"
          value={weights.passFraction}
          step={0.1}
          onChange={(v) => setGrpo('rewardWeights', { ...weights, passFraction: v })}
        />
      </Field>
      <Field label="Reward: λ efficiency">
        <NumberInput
          name="weff"
          value={weights.efficiency}
          step={0.05}
          onChange={(v) => setGrpo('rewardWeights', { ...weights, efficiency: v })}
        />
      </Field>
      <Field label="Reward: format penalty">
        <NumberInput
          name="wfmt"
          value={weights.formatPenalty}
          step={0.1}
          onChange={(v) => setGrpo('rewardWeights', { ...weights, formatPenalty: v })}
        />
      </Field>
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
