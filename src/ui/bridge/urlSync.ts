// The run's settings in the page's URL: read at boot, written whenever they change, so a
// link opens the exact setup. The page's own keys (`test`) survive the rewrite.
import {
  decodeRunConfig,
  encodeRunConfig,
  type Lesson,
  lessonById,
  lessonRunConfig,
  type RunConfig,
} from '../../engine/api';

/** URL keys that are the page's, not the run's: kept when the settings are written. */
const PAGE_KEYS = ['test', 'lesson'];

export function writeConfigToUrl(config: RunConfig) {
  const params = encodeRunConfig(config);
  const current = new URLSearchParams(location.search);
  for (const key of PAGE_KEYS) {
    const value = current.get(key);
    if (value !== null) params.set(key, value);
  }
  const query = params.toString();
  const url = `${location.pathname}${query ? `?${query}` : ''}${location.hash}`;
  history.replaceState(null, '', url);
}

/**
 * The URL's settings: the config (bad values keep their defaults, named in `problems`) and
 * whether the link gives any setting at all (a bare page URL resumes the saved run).
 */
export function readConfigFromUrl(): {
  config: RunConfig;
  problems: string[];
  given: boolean;
  lesson: { lesson: Lesson; base: RunConfig } | null;
} {
  const params = new URLSearchParams(location.search);
  const { config, problems } = decodeRunConfig(params);
  const given = [...params.keys()].some((key) => !PAGE_KEYS.includes(key));
  const lessonId = params.get('lesson');
  if (lessonId === null) return { config, problems, given, lesson: null };
  const lesson = lessonById(lessonId);
  if (!lesson) {
    problems.push(`lesson "${lessonId}" is not one of the lab's lessons`);
    return { config, problems, given, lesson: null };
  }
  // A link that names its task set or mode is one of the lesson's runs already (the page
  // writes the active run's settings beside `lesson`, so a reload stays on it); the lesson's
  // base is then the link without what its runs set. Otherwise the lesson opens on its first
  // run, over the link's settings.
  const base = new URLSearchParams(params);
  for (const key of LESSON_RUN_KEYS) base.delete(key);
  if (params.get('mode') === 'self-plan') for (const key of ['n', 'm']) base.delete(key);
  const baseConfig = decodeRunConfig(base).config;
  if (LESSON_RUN_KEYS.some((key) => params.has(key))) {
    return { config, problems, given: true, lesson: { lesson, base: baseConfig } };
  }
  const first = lessonRunConfig(baseConfig, lesson.runs[0]!);
  return {
    config: first.config,
    problems: [...problems, ...first.problems],
    given: true,
    lesson: { lesson, base: baseConfig },
  };
}

/** The settings every lesson run sets (engine/lessons.ts): their presence marks a run of it. */
const LESSON_RUN_KEYS = ['taskset', 'mode'];

/** Opens or closes a lesson in the URL (the run's settings stay as they are). */
export function writeLessonToUrl(id: string | null) {
  const params = new URLSearchParams(location.search);
  if (id === null) params.delete('lesson');
  else params.set('lesson', id);
  const query = params.toString();
  history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
}

/**
 * Same run settings, the memory budget aside: a budget the page halved after an
 * out-of-memory is the saved run's own, and must not make its link start a new run.
 */
export function sameConfig(a: RunConfig, b: RunConfig): boolean {
  const settings = (config: RunConfig) => {
    const params = encodeRunConfig(config);
    params.delete('mem');
    return params.toString();
  };
  return settings(a) === settings(b);
}
