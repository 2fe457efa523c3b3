import { type ReactNode, useState } from 'react';
import type { GrpoConfig, RewardWeights, RunConfig } from '../../engine/api';
import { runConfigProblems } from '../../engine/api';
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
}[] = [
  { label: 'Tasks per step', name: 'tasks', key: 'tasksPerStep', min: 1 },
  { label: 'N plans per task', name: 'n', key: 'plansPerTask', min: 1 },
  { label: 'M programs per plan', name: 'm', key: 'programsPerPlan', min: 2 },
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

/** Each setting's label by its config field, so the engine's words name what the user sees. */
const LABEL_OF_FIELD: Record<string, string> = {
  ...Object.fromEntries(GRPO_NUMBERS.map((f) => [f.key, f.label])),
  ...Object.fromEntries(WEIGHT_NUMBERS.map((f) => [`rewardWeights.${f.key}`, f.label])),
  mode: 'Mode',
  seed: 'Seed',
  lossType: 'Loss aggregation',
  tierMix: 'Task tiers',
  memoryBudgetMiB: 'Micro-batch memory',
};

/**
 * Applies a change when the engine would run it; otherwise leaves the config (and the URL)
 * as they are and returns why, in the engine's own words with the panel's labels.
 */
function applyConfig(update: (config: RunConfig) => RunConfig): string | null {
  const current = useLabStore.getState().config;
  const next = update(current);
  // Only what this change breaks: a config loaded as it was is not this input's fault.
  const before = new Set(runConfigProblems(current).map((p) => p.message));
  const problems = runConfigProblems(next).filter((p) => !before.has(p.message));
  if (problems.length > 0) {
    return problems
      .map(({ field, message }) => {
        const label = LABEL_OF_FIELD[field];
        return label && message.startsWith(field) ? label + message.slice(field.length) : message;
      })
      .join('; ');
  }
  useLabStore.setState({ config: next });
  writeConfigToUrl(next);
  return null;
}

const applyGrpo = <K extends keyof GrpoConfig>(key: K, value: GrpoConfig[K]) =>
  applyConfig((config) => ({ ...config, grpo: { ...config.grpo, [key]: value } }));

function Field({
  label,
  children,
  hint,
  problem,
}: {
  label: string;
  children: ReactNode;
  hint?: string;
  problem?: string | null;
}) {
  return (
    <div className="field-row">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: the control is passed in as a child */}
      <label className="field" title={hint}>
        <span>{label}</span>
        {children}
      </label>
      {problem && (
        <p className="field-problem" role="alert">
          {problem} Not applied.
        </p>
      )}
    </div>
  );
}

/**
 * A number setting. What is typed stays in the input as typed; it reaches the config and the
 * URL only when the engine would run it, and otherwise the refusal shows under the input.
 * `value` null is an empty input (a setting left to the engine).
 */
function NumberField({
  label,
  value,
  apply,
  step,
  min,
  name,
  placeholder,
  optional,
}: {
  label: string;
  value: number | null;
  apply: (value: number | undefined) => string | null;
  step?: number;
  min?: number;
  name: string;
  placeholder?: string;
  optional?: boolean;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  return (
    <Field label={label} problem={problem}>
      <input
        type="number"
        name={name}
        value={draft ?? (value === null ? '' : String(value))}
        step={step ?? 1}
        min={min}
        placeholder={placeholder}
        aria-invalid={problem ? true : undefined}
        onChange={(event) => {
          const text = event.target.value;
          setDraft(text);
          if (text.trim() === '') {
            setProblem(optional ? apply(undefined) : `${label} needs a number.`);
            return;
          }
          setProblem(apply(Number(text)));
        }}
        // Typed text stays while it is refused; an accepted one shows as the config holds it.
        onBlur={() => {
          if (!problem) setDraft(null);
        }}
      />
    </Field>
  );
}

/**
 * Every setting of the next run. A change the engine would run goes to the URL at once and
 * applies on Reset; one it would refuse is refused where it is typed.
 */
export function ControlsPanel() {
  const config = useLabStore((state) => state.config);
  const engineBudgetMiB = useLabStore((state) => state.memoryBudgetMiB);
  const grpo = config.grpo;
  const weights = grpo.rewardWeights;
  const [selectProblem, setSelectProblem] = useState<{ name: string; text: string } | null>(null);
  /** A select's change, refused like a number's (mode core needs N ≥ 2). */
  const choose = (name: string, refusal: string | null) =>
    setSelectProblem(refusal ? { name, text: refusal } : null);
  const selectProblemOf = (name: string) =>
    selectProblem?.name === name ? selectProblem.text : null;
  return (
    <aside className="controls" aria-label="Run settings">
      <h2>Run settings</h2>
      <Field label="Model preset" problem={selectProblemOf('preset')}>
        <select
          name="preset"
          value={config.preset}
          onChange={(e) =>
            choose(
              'preset',
              applyConfig((c) => ({ ...c, preset: e.target.value as RunConfig['preset'] })),
            )
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
        problem={selectProblemOf('mode')}
      >
        <select
          name="mode"
          value={grpo.mode}
          onChange={(e) => choose('mode', applyGrpo('mode', e.target.value as GrpoConfig['mode']))}
        >
          <option value="core">core (Planner + Coder)</option>
          <option value="single">single (Coder alone)</option>
          <option value="frozen-planner">frozen-planner</option>
        </select>
      </Field>
      <fieldset className="tiers">
        <legend>Task tiers (weights)</legend>
        {TIERS.map((tier) => (
          <NumberField
            key={tier}
            label={tier}
            name={`tier-${tier}`}
            value={config.tierMix[tier] ?? 0}
            min={0}
            apply={(value) =>
              applyConfig((c) => ({ ...c, tierMix: { ...c.tierMix, [tier]: value ?? 0 } }))
            }
          />
        ))}
      </fieldset>
      {GRPO_NUMBERS.map((field) => (
        <NumberField
          key={field.name}
          label={field.label}
          name={field.name}
          value={grpo[field.key] as number}
          step={field.step}
          min={field.min}
          apply={(value) => applyGrpo(field.key, value as GrpoConfig[typeof field.key])}
        />
      ))}
      <Field label="Loss aggregation" problem={selectProblemOf('loss')}>
        <select
          name="loss"
          value={grpo.lossType}
          onChange={(e) =>
            choose('loss', applyGrpo('lossType', e.target.value as GrpoConfig['lossType']))
          }
        >
          <option value="grpo">grpo</option>
          <option value="dapo">dapo</option>
          <option value="dr_grpo">dr_grpo</option>
        </select>
      </Field>
      {WEIGHT_NUMBERS.map((field) => (
        <NumberField
          key={field.name}
          label={field.label}
          name={field.name}
          value={weights[field.key]}
          step={field.step}
          apply={(value) =>
            applyConfig((c) => ({
              ...c,
              grpo: {
                ...c.grpo,
                rewardWeights: { ...c.grpo.rewardWeights, [field.key]: value },
              },
            }))
          }
        />
      ))}
      <NumberField
        label="Seed"
        name="seed"
        value={grpo.seed}
        min={0}
        apply={(value) => applyGrpo('seed', value as number)}
      />
      <NumberField
        label="Micro-batch memory (MiB)"
        name="mem"
        value={config.memoryBudgetMiB ?? null}
        step={16}
        min={16}
        optional
        placeholder={engineBudgetMiB !== null ? `${engineBudgetMiB} (auto)` : 'auto'}
        apply={(value) =>
          applyConfig((c) => {
            const { memoryBudgetMiB: _old, ...rest } = c;
            return value === undefined ? rest : { ...rest, memoryBudgetMiB: value };
          })
        }
      />
    </aside>
  );
}
