// What every control of the run settings shares: a setting's row (label, "?" help, control,
// refusal) and the one way a change reaches the config and the URL (only when the engine would
// run it). ControlsPanel and ModelPicker build on them.
import { type ReactNode, useId, useState } from 'react';
import type { RunConfig, Setting } from '../../engine/api';
import {
  fieldOf,
  followKindDefaults,
  runConfigProblems,
  SETTINGS,
  withSetting,
} from '../../engine/api';
import { writeConfigToUrl } from '../engineClient';
import { useLabStore } from '../state/labStore';

/** Each setting's label by its config field, so the engine's words name what the user sees. */
const LABEL_OF_FIELD: Record<string, string> = Object.fromEntries(
  SETTINGS.map((s) => [fieldOf(s), s.label]),
);

/**
 * Applies a change when the engine would run it; otherwise leaves the config (and the URL)
 * as they are and returns why, in the engine's own words with the panel's labels. Settings
 * at their default follow the kind of run the change makes (a base: rank 8; LoRA: its rate).
 */
export function applyConfig(update: (config: RunConfig) => RunConfig): string | null {
  const current = useLabStore.getState().config;
  const next = followKindDefaults(current, update(current));
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

export const applySetting = (s: Setting, value: unknown) =>
  applyConfig((config) => withSetting(config, s, value));

/**
 * One setting's row: its label, an "?" button that shows what it does, the control, and a
 * refusal under it. The explanation is always the control's description (aria-describedby),
 * shown or not, and the label's tooltip.
 */
export function Field({
  label,
  help,
  children,
  problem,
  wide,
}: {
  label: string;
  help?: string;
  /** The control, given the id the label points at and the description's id. */
  children: (ids: { id: string; describedBy: string | undefined }) => ReactNode;
  problem?: string | null;
  /** The control under its label, full width (selects with long option names). */
  wide?: boolean;
}) {
  const id = useId();
  const helpId = `${id}-help`;
  const labelId = `${id}-label`;
  const [open, setOpen] = useState(false);
  return (
    <div className={`field-row${wide ? ' wide' : ''}`}>
      <div className="field">
        <label htmlFor={id} id={labelId} title={help}>
          {label}
        </label>
        {help && (
          <button
            type="button"
            className="field-info"
            // The setting's name is the button's description, not its name: "Step" or "Run"
            // must still name one button on the page.
            aria-label="Explain this setting"
            aria-describedby={labelId}
            aria-expanded={open}
            aria-controls={helpId}
            title={help}
            onClick={() => setOpen(!open)}
          >
            ?
          </button>
        )}
        {children({ id, describedBy: help ? helpId : undefined })}
      </div>
      {help && (
        <p id={helpId} className="field-help" hidden={!open}>
          {help}
        </p>
      )}
      {problem && (
        <p className="field-problem" role="alert">
          {problem} Not applied.
        </p>
      )}
    </div>
  );
}

/**
 * A free-text setting: typed text stays as typed until Enter or leaving the field, then goes to
 * `apply`, whose refusal shows under it (and the text stays for correcting).
 */
export function TextField({
  label,
  help,
  name,
  placeholder,
  value,
  apply,
}: {
  label: string;
  help?: string;
  name: string;
  placeholder?: string;
  value: string;
  apply: (text: string) => string | null;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const commit = (text: string) => {
    const refusal = apply(text.trim());
    setProblem(refusal);
    if (!refusal) setDraft(null);
  };
  return (
    <Field label={label} help={help} problem={problem}>
      {({ id, describedBy }) => (
        <input
          id={id}
          aria-describedby={describedBy}
          name={name}
          type="text"
          placeholder={placeholder}
          value={draft ?? value}
          aria-invalid={problem ? true : undefined}
          onChange={(event) => setDraft(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter') commit(event.currentTarget.value);
          }}
          onBlur={(event) => {
            if (draft !== null) commit(event.currentTarget.value);
          }}
        />
      )}
    </Field>
  );
}
