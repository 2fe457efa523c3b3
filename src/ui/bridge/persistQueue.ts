// IndexedDB writes of engine events, in order. A status change is shown only after the
// writes before it have landed, so "idle" means the step is saved (a reload resumes it).
import { reportError } from './notices';

let persisting: Promise<void> = Promise.resolve();

/** Queues one write after every earlier one; a failed write is reported, not thrown. */
export function persist(write: () => Promise<void>) {
  persisting = persisting.then(write).catch((error: unknown) => {
    reportError(`Saving the run failed: ${(error as Error).message}`, true);
  });
}

/** Resolves once every write queued so far has landed (or failed and been reported). */
export function whenPersisted(): Promise<void> {
  return persisting;
}
