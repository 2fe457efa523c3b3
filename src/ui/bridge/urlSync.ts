// The run's settings in the page's URL: read at boot, written whenever they change, so a
// link opens the exact setup. The page's own keys (`test`) survive the rewrite.
import {
  decodeRunConfig,
  encodeRunConfig,
  type Lesson,
  lessonById,
  type RunConfig,
  readLessonLink,
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
  replaceQuery(params);
}

/** The page's URL with `params` for its query (no history entry). */
function replaceQuery(params: URLSearchParams) {
  const query = params.toString();
  history.replaceState(null, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
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
  const opened = readLessonLink(lesson, params);
  return {
    config: opened.config,
    problems: [...problems, ...opened.problems],
    given: true,
    lesson: { lesson, base: opened.base },
  };
}

/** Opens or closes a lesson in the URL (the run's settings stay as they are). */
export function writeLessonToUrl(id: string | null) {
  const params = new URLSearchParams(location.search);
  if (id === null) params.delete('lesson');
  else params.set('lesson', id);
  replaceQuery(params);
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
