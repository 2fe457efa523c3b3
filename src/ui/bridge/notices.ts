// The error banner's list: what went wrong, and whether the run can go on.
import { useLabStore } from '../state/labStore';

/** A message for the error banner; `recoverable`: the run can continue. */
export interface Notice {
  message: string;
  recoverable: boolean;
}

let nextId = 1;

/** Shows a message in the error banner (the last five are kept). */
export function reportError(message: string, recoverable: boolean) {
  useLabStore.setState((state) => ({
    errors: [...state.errors, { id: nextId++, message, recoverable }].slice(-5),
  }));
}

export function dismissError(id: number) {
  useLabStore.setState((state) => ({ errors: state.errors.filter((e) => e.id !== id) }));
}
