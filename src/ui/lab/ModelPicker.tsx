import { useState } from 'react';
import type { BackendReport, RunConfig } from '../../engine/api';
import {
  DEFAULT_BASE_LORA_RANK,
  DEFAULT_HUB,
  describeDuration,
  describeLearningRate,
  describeSuggested,
  estimateStepSeconds,
  parseHubId,
  SUGGESTED_MODELS,
} from '../../engine/api';
import { useLabStore } from '../state/labStore';
import { applyConfig, Field, TextField } from './settingField';

const LAB = 'lab';
const OTHER = 'other';
/** A step longer than this is called out before Train. */
const SLOW_STEP_SECONDS = 60;

const MODEL_HELP =
  'The models that train. The lab’s tiny models (the default) learn in CPU minutes. A Hugging Face model (GPT-2, or the Llama family: Llama, Qwen2, Qwen3) is downloaded once into the browser’s cache and held frozen; the Planner and the Coder each train a LoRA adapter over it, prompted through its chat template (plain text where it has none), on the task set chosen below. Its size and the memory check show before the weights download.';

/**
 * With a base: the run's rank, or a base's 8 where it had none or 0 (a base trains adapters
 * only); applyConfig then brings LoRA's rate where the rate was its default.
 */
function withBase(config: RunConfig, id: string): RunConfig {
  const loraRank = (config.loraRank ?? 0) > 0 ? config.loraRank : DEFAULT_BASE_LORA_RANK;
  return { ...config, base: id, loraRank };
}

function withoutBase(config: RunConfig): RunConfig {
  const { base: _base, hub: _hub, ...rest } = config;
  return rest;
}

/** Whether sampling and updates run on a hardware GPU (the estimate's throughput). */
function onGpu(backend: BackendReport | null): boolean {
  if (!backend) return false;
  if (backend.gpu) return backend.kernels === true && !backend.gpu.software;
  return backend.backend === 'webgpu';
}

/**
 * The Model choice: the lab's tiny models, a suggested Hugging Face model, or any Hub id typed;
 * with a Hub model, its size, where it downloads from, and an estimate of a step's time on this
 * machine, called out when it would take minutes.
 */
export function ModelPicker() {
  const config = useLabStore((state) => state.config);
  const backend = useLabStore((state) => state.backend);
  const base = config.base;
  const suggested = SUGGESTED_MODELS.find((m) => m.id === base);
  const [typing, setTyping] = useState(false);
  const choice = typing ? OTHER : base === undefined ? LAB : suggested ? suggested.id : OTHER;
  const [problem, setProblem] = useState<string | null>(null);

  const seconds = suggested
    ? estimateStepSeconds(suggested.parameters, config, onGpu(backend))
    : null;
  return (
    <>
      <Field label="Model" help={MODEL_HELP} problem={problem} wide>
        {({ id, describedBy }) => (
          <select
            id={id}
            aria-describedby={describedBy}
            name="model"
            value={choice}
            onChange={(event) => {
              const value = event.target.value;
              setProblem(null);
              if (value === LAB) {
                setTyping(false);
                setProblem(applyConfig(withoutBase));
              } else if (value === OTHER) {
                setTyping(true);
              } else {
                setTyping(false);
                setProblem(applyConfig((c) => withBase(c, value)));
              }
            }}
          >
            <option value={LAB}>The lab’s tiny models (default)</option>
            {SUGGESTED_MODELS.map((m) => (
              <option key={m.id} value={m.id}>
                {m.id} · {describeSuggested(m)}
              </option>
            ))}
            <option value={OTHER}>Another Hugging Face model…</option>
          </select>
        )}
      </Field>
      {choice === OTHER && (
        <TextField
          label="Hub id"
          help="org/name (or org/name@revision) of a GPT-2, Llama, Qwen2 or Qwen3 model on the hub below."
          name="base"
          placeholder="org/name"
          value={suggested ? '' : (base ?? '')}
          apply={(id) =>
            parseHubId(id)
              ? applyConfig((c) => withBase(c, id))
              : `"${id}" is not a Hub id: write org/name (or org/name@revision).`
          }
        />
      )}
      {base !== undefined && (
        <>
          <HubField hub={config.hub} />
          <p className="field-help model-about" data-testid="model-about">
            {suggested
              ? `${suggested.about}; ${describeSuggested(suggested)}. `
              : 'Its size shows from its config.json before the weights download. '}
            Each role trains a rank-{config.loraRank} LoRA adapter over it at{' '}
            {describeLearningRate(config)}.
          </p>
          {seconds !== null && backend && (
            <p
              className={`field-help model-estimate${seconds > SLOW_STEP_SECONDS ? ' slow' : ''}`}
              data-testid="model-estimate"
            >
              {seconds > SLOW_STEP_SECONDS ? 'Slow here: a' : 'A'} step would take{' '}
              {describeDuration(seconds)} on this machine’s{' '}
              {onGpu(backend) ? 'GPU' : 'CPU (no hardware WebGPU adapter)'} with these settings (an
              estimate from its size).
              {seconds > SLOW_STEP_SECONDS && onGpu(backend) === false
                ? ' A machine with a WebGPU GPU runs it in the lab’s kernels.'
                : ''}
            </p>
          )}
        </>
      )}
    </>
  );
}

/** Where the base downloads from (empty: the Hugging Face Hub). */
function HubField({ hub }: { hub: string | undefined }) {
  return (
    <TextField
      label="Model hub"
      help="Where the model downloads from: a Hugging Face Hub endpoint, or a mirror in the Hub's layout. Empty: the Hugging Face Hub."
      name="hub"
      placeholder={DEFAULT_HUB}
      value={hub ?? ''}
      apply={(value) =>
        applyConfig((c) => {
          const { hub: _hub, ...rest } = c;
          return value === '' ? rest : { ...rest, hub: value };
        })
      }
    />
  );
}
