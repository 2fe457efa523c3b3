// The classroom lessons (engine/lessons.ts): each run's config is its settings over those the
// lesson was opened with, and every run of every lesson is a config the engine runs.
import { describe, expect, it } from 'vitest';
import { LESSONS, lessonById, lessonRunConfig, readLessonLink } from '../../src/engine/lessons';
import { decodeRunConfig, encodeRunConfig, runConfigProblems } from '../../src/engine/runConfig';

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

  it('reads a link back: a bare lesson link opens run 1, a run’s own link stays on that run', () => {
    const lesson = lessonById('plan-help')!;
    const opened = readLessonLink(lesson, new URLSearchParams('lesson=plan-help&n=2&m=3'));
    expect([opened.config.taskSet, opened.config.grpo.mode]).toEqual(['examples', 'core']);
    expect(opened.problems).toEqual([]);
    // The page's URL on run 2 (self-plan, N = 1, M = N·M = 6): the same run, and the base
    // without what that run set.
    const second = lessonRunConfig(opened.base, lesson.runs[1]!).config;
    const reloaded = readLessonLink(
      lesson,
      new URLSearchParams(`lesson=plan-help&${encodeRunConfig(second)}`),
    );
    expect(reloaded.config).toEqual(second);
    expect(reloaded.base.grpo.mode).toBe('core');
    expect(reloaded.base.grpo.plansPerTask).toBe(4);
  });
});
