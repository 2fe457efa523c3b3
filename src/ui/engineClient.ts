// The page's handle on the engine, in one import: each job lives in its own file under
// ui/bridge/ — transport.ts (the Worker and its requests), applyEvent.ts (an event's store
// change, pure), persistQueue.ts (IndexedDB writes in order), urlSync.ts (settings in the
// URL), runLifecycle.ts (boot, runs, train/step/pause, recovery), notices.ts (the error
// banner).
export { dismissError, reportError } from './bridge/notices';
export {
  addImportedRun,
  bootLab,
  decideLinkDownload,
  lessonRunName,
  newRun,
  pause,
  step,
  switchToRun,
  train,
  warmStartFromScratch,
} from './bridge/runLifecycle';
export { judge, requestGguf, requestSnapshot, solve } from './bridge/transport';
export { writeConfigToUrl, writeLessonToUrl } from './bridge/urlSync';
