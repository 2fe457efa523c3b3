import { useState } from 'react';
import type { Setting } from '../../engine/api';
import { describeLearningRate, settingByUrlKey, settingValue, TIERS } from '../../engine/api';
import { useLabStore } from '../state/labStore';
import { LessonChooser } from './LessonPanel';
import { ModelPicker } from './ModelPicker';
import { applyConfig, applySetting, Field } from './settingField';

/** The number settings after the tiers, in the order the panel shows them (by URL key). */
const GRPO_NUMBERS = ['tasks', 'n', 'm', 'beta', 'epsl', 'epsh', 'lr', 'temp'].map(byKey);
const WEIGHT_NUMBERS = ['wpass', 'weff', 'wfmt'].map(byKey);
const TIER_MIX = byKey('tiers');

function byKey(key: string): Setting {
  const found = settingByUrlKey(key);
  if (!found) throw new Error(`no setting with URL key ${key}`);
  return found;
}

/**
 * A number setting. What is typed stays in the input as typed; it reaches the config and the
 * URL only when the engine would run it, and otherwise the refusal shows under the input.
 * `value` null is an empty input (a setting left to the engine).
 */
function NumberField({
  label,
  help,
  value,
  apply,
  step,
  min,
  name,
  placeholder,
  optional,
}: {
  label: string;
  help?: string;
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
    <Field label={label} help={help} problem={problem}>
      {({ id, describedBy }) => (
        <input
          id={id}
          aria-describedby={describedBy}
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
      )}
    </Field>
  );
}

/** A number setting of the table, as the panel shows it. */
function SettingNumber({ setting: s, placeholder }: { setting: Setting; placeholder?: string }) {
  const value = useLabStore((state) => settingValue(state.config, s)) as number | undefined;
  return (
    <NumberField
      label={s.unit ? `${s.label} (${s.unit})` : s.label}
      help={s.help}
      name={s.urlKey ?? s.cliFlag}
      value={value ?? null}
      step={s.step}
      min={s.min}
      optional={s.optional}
      placeholder={placeholder}
      apply={(next) => applySetting(s, next)}
    />
  );
}

/** The learning rate, and which rate is in force and why (a LoRA run's default is its own). */
function LearningRate({ setting: s }: { setting: Setting }) {
  const config = useLabStore((state) => state.config);
  return (
    <>
      <SettingNumber setting={s} />
      <p className="field-help rate-source" data-testid="learning-rate-source">
        {describeLearningRate(config)}
      </p>
    </>
  );
}

/** A choice setting of the table, refused like a number (mode core needs N ≥ 2). */
function SettingSelect({
  setting: s,
  problem,
  choose,
}: {
  setting: Setting;
  problem: string | null;
  choose: (name: string, refusal: string | null) => void;
}) {
  const value = useLabStore((state) => settingValue(state.config, s)) as string;
  const name = s.urlKey ?? s.cliFlag;
  return (
    <Field label={s.label} help={s.help} problem={problem} wide>
      {({ id, describedBy }) => (
        <select
          id={id}
          aria-describedby={describedBy}
          name={name}
          value={value}
          onChange={(e) => choose(name, applySetting(s, e.target.value))}
        >
          {s.choices?.map((choice) => (
            <option key={choice.value} value={choice.value}>
              {choice.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * Every setting of the next run. A change the engine would run goes to the URL at once and
 * applies on Reset; one it would refuse is refused where it is typed.
 */
export function ControlsPanel() {
  const tierMix = useLabStore((state) => state.config.tierMix);
  // The Debugger's and the Retriever's settings show with the topology that has them.
  const agents: string = useLabStore((state) => state.config.grpo.agents) ?? 'planner,coder';
  // K shows with the alternating schedule that reads it.
  const schedule: string = useLabStore((state) => state.config.grpo.schedule) ?? 'simultaneous';
  const engineBudgetMiB = useLabStore((state) => state.memoryBudgetMiB);
  const [selectProblem, setSelectProblem] = useState<{ name: string; text: string } | null>(null);
  const choose = (name: string, refusal: string | null) =>
    setSelectProblem(refusal ? { name, text: refusal } : null);
  const select = (key: string) => (
    <SettingSelect
      setting={byKey(key)}
      problem={selectProblem?.name === key ? selectProblem.text : null}
      choose={choose}
    />
  );
  return (
    <aside className="controls" aria-label="Run settings">
      <h2>Run settings</h2>
      <LessonChooser />
      <ModelPicker />
      {select('preset')}
      {select('backend')}
      {select('mode')}
      {select('schedule')}
      {schedule === 'alternating' && <SettingNumber setting={byKey('stage')} />}
      {select('pcredit')}
      {select('agents')}
      {agents.includes('debugger') && (
        <>
          <SettingNumber setting={byKey('d')} />
          <SettingNumber setting={byKey('dprog')} />
          {select('rcredit')}
        </>
      )}
      {agents.includes('retriever') && (
        <>
          <SettingNumber setting={byKey('k')} />
          {select('retrieval')}
        </>
      )}
      {select('taskset')}
      {select('sees')}
      <SettingNumber setting={byKey('pdrop')} placeholder="0.1 on examples, 0 on procedural" />
      <fieldset className="tiers" aria-describedby="tier-mix-help">
        <legend>{TIER_MIX.label} (weights)</legend>
        <p id="tier-mix-help" className="field-help tiers-help">
          {TIER_MIX.help}
        </p>
        {TIERS.map((tier) => (
          <NumberField
            key={tier}
            label={tier}
            name={`tier-${tier}`}
            value={tierMix[tier] ?? 0}
            min={TIER_MIX.min}
            apply={(value) =>
              applyConfig((c) => ({ ...c, tierMix: { ...c.tierMix, [tier]: value ?? 0 } }))
            }
          />
        ))}
      </fieldset>
      {GRPO_NUMBERS.map((s) =>
        s.urlKey === 'lr' ? (
          <LearningRate key={s.path} setting={s} />
        ) : (
          <SettingNumber key={s.path} setting={s} />
        ),
      )}
      {select('loss')}
      {WEIGHT_NUMBERS.map((s) => (
        <SettingNumber key={s.path} setting={s} />
      ))}
      <SettingNumber setting={byKey('seed')} />
      <SettingNumber
        setting={byKey('mem')}
        placeholder={engineBudgetMiB !== null ? `${engineBudgetMiB} (auto)` : 'auto'}
      />
      <SettingNumber setting={byKey('lora')} placeholder="0 (full fine-tuning)" />
      <SettingNumber setting={byKey('lalpha')} placeholder="16" />
    </aside>
  );
}
