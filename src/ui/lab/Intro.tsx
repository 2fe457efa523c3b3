import { useState } from 'react';

/** Where the page remembers that the introduction was dismissed. */
export const INTRO_STORAGE_KEY = 'core-code-lab:intro-dismissed';

function dismissedBefore(): boolean {
  try {
    return localStorage.getItem(INTRO_STORAGE_KEY) === '1';
  } catch {
    return false; // storage blocked: show it, it can still be closed for this visit
  }
}

/** A first visit's introduction: what Train does, where the models come from, what to expect. */
export function Intro() {
  const [open, setOpen] = useState(() => !dismissedBefore());
  if (!open) return null;
  const dismiss = () => {
    try {
      localStorage.setItem(INTRO_STORAGE_KEY, '1');
    } catch {
      // not remembered; closed for this visit
    }
    setOpen(false);
  };
  return (
    <section className="intro" aria-labelledby="intro-title" data-testid="intro">
      <h2 id="intro-title">What happens here</h2>
      <ul>
        <li>
          <strong>Train</strong> runs GRPO steps in this page until you press Pause. In each step
          the Planner writes N plans per task, the Coder writes M programs from each plan, the
          sandbox runs the programs against the task’s tests, and both models are nudged towards the
          samples that scored above their group’s average. Step does exactly one.
        </li>
        <li>
          Both models start from the shipped warm-start checkpoints: about 45–55 minutes of
          supervised training on reference plans and programs of tiers L1–L4, which they now solve.
          Training runs on L5: the same steps composed in shapes the warm start never saw, about two
          in five solved at step 0. That is what GRPO has to learn.
        </li>
        <li>
          The first minute: a few seconds of loading (checkpoints and sandbox); on the first Train
          the warm start is evaluated (“evaluating…”, the dashed baseline of{' '}
          <em>Is it learning?</em>), then a step every few seconds on a CPU, faster on a GPU, and a
          few seconds more on the steps that evaluate. Single steps are noisy; watch the curves over
          tens of steps: in about five minutes the pass fraction climbs from about 0.44 to 0.53 and
          the evaluation's L5 from 1 in 8 to 4 in 8. Groups marked σ&gt;0 in the inspector are the
          ones GRPO learns from: click a sample to see its plan, program, reward and advantage Â.
        </li>
      </ul>
      <button type="button" onClick={dismiss}>
        Got it
      </button>
    </section>
  );
}
