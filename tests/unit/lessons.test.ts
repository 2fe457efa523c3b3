// The classroom lessons (engine/lessons.ts): each run's config is its settings over those the
// lesson was opened with, and every run of every lesson is a config the engine runs.
import { describe, expect, it } from 'vitest';
import { LESSONS, lessonById, lessonRunConfig } from '../../src/engine/lessons';
import { decodeRunConfig, runConfigProblems } from '../../src/engine/runConfig';

describe('lessons', () => {
  it('every run of every lesson is a config the engine runs, on the defaults and on a small link', () => {
    for (const link of ['', 'tasks=1&n=2&m=2&eval=1&seed=3']) {
      const base = decodeRunConfig(new URLSearchParams(link)).config;
      for (const lesson of LESSONS) {
        for (const run of lesson.runs) {
          const { config, problems } = lessonRunConfig(base, run);
          expect(problems, `${lesson.id} · ${run.name}`).toEqual([]);
          expect(runConfigProblems(config)).toEqual([]);
        }
      }
    }
  });

  it('"When does a plan help?": CoRe and self-plan with as many programs per task, on both worlds', () => {
    const lesson = lessonById('plan-help')!;
    const base = decodeRunConfig(new URLSearchParams('tasks=1&n=2&m=3&seed=7')).config;
    const configs = lesson.runs.map((run) => lessonRunConfig(base, run).config);
    expect(configs.map((c) => [c.taskSet ?? 'procedural', c.grpo.mode])).toEqual([
      ['examples', 'core'],
      ['examples', 'self-plan'],
      ['procedural', 'core'],
      ['procedural', 'self-plan'],
    ]);
    for (const config of configs) {
      expect(config.grpo.tasksPerStep).toBe(1);
      expect(config.grpo.seed).toBe(7);
      const perTask =
        config.grpo.mode === 'core'
          ? config.grpo.plansPerTask * config.grpo.programsPerPlan
          : config.grpo.programsPerPlan;
      expect(perTask).toBe(6);
    }
    expect(lessonById('nope')).toBeNull();
  });
});
