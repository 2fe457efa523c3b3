import { describe, expect, it } from 'vitest';
import {
  classifyFailure,
  describeRecovery,
  FALLBACK_MEMORY_BUDGET_MIB,
  isXnnFailureLine,
  MAX_CONSECUTIVE_FAILURES,
  planRecovery,
} from '../../src/engine/failure';

// The words the issue quotes, as the wasm backend and the browser print them.
const XNN_LINE =
  'XNN status for xnn_create_fully_connected_nc_f32 is not successful. Got status 6. Use -c dbg to see XNN logs.';
const ABORTED = 'Aborted(). Build with -sASSERTIONS for more info.';

describe('classifyFailure', () => {
  it('names every out-of-memory sign an out_of_memory', () => {
    for (const error of [
      new WebAssembly.RuntimeError('memory access out of bounds'),
      new WebAssembly.RuntimeError(ABORTED),
      new Error('Out of memory'),
      new RangeError('Array buffer allocation failed'),
      'RuntimeError: memory access out of bounds',
      { message: 'Uncaught RuntimeError: Aborted(OOM)' },
    ]) {
      expect(classifyFailure(error).kind, String(error)).toBe('out_of_memory');
    }
  });

  it('keeps the error’s own words as the message', () => {
    expect(classifyFailure(new WebAssembly.RuntimeError(ABORTED))).toEqual({
      kind: 'out_of_memory',
      message: ABORTED,
    });
  });

  it('makes any error after an XNNPACK failure line an out_of_memory, named by that line', () => {
    expect(classifyFailure(new TypeError('x is undefined'), ['loading', XNN_LINE])).toEqual({
      kind: 'out_of_memory',
      message: XNN_LINE,
    });
  });

  it('calls other errors a crash', () => {
    expect(classifyFailure(new Error('Test failure'), ['some warning'])).toEqual({
      kind: 'crash',
      message: 'Test failure',
    });
  });

  it('recognises the XNN line however the status varies, and nothing else', () => {
    expect(isXnnFailureLine(XNN_LINE)).toBe(true);
    expect(
      isXnnFailureLine('XNN status for xnn_setup_*_nd_f32 is not successful. Got status 2'),
    ).toBe(true);
    expect(isXnnFailureLine('XNN status ok')).toBe(false);
    expect(isXnnFailureLine('High memory usage in GPU')).toBe(false);
  });
});

describe('planRecovery', () => {
  const oom = { kind: 'out_of_memory', message: 'memory access out of bounds' } as const;
  const crash = { kind: 'crash', message: 'boom' } as const;

  it('halves the budget the engine reported when the run sets none', () => {
    expect(
      planRecovery({
        failure: oom,
        consecutiveFailures: 1,
        configuredBudgetMiB: undefined,
        effectiveBudgetMiB: 512,
      }),
    ).toEqual({ action: 'retry', memoryBudgetMiB: 256 });
  });

  it('halves the run’s own budget before the reported one', () => {
    expect(
      planRecovery({
        failure: oom,
        consecutiveFailures: 2,
        configuredBudgetMiB: 100,
        effectiveBudgetMiB: 512,
      }),
    ).toEqual({ action: 'retry', memoryBudgetMiB: 50 });
  });

  it('halves a stated fallback when nothing reported a budget', () => {
    expect(
      planRecovery({
        failure: oom,
        consecutiveFailures: 1,
        configuredBudgetMiB: undefined,
        effectiveBudgetMiB: undefined,
      }),
    ).toEqual({ action: 'retry', memoryBudgetMiB: FALLBACK_MEMORY_BUDGET_MIB / 2 });
  });

  it('gives up when the halved budget would fall under 16 MiB', () => {
    expect(
      planRecovery({
        failure: oom,
        consecutiveFailures: 1,
        configuredBudgetMiB: 31,
        effectiveBudgetMiB: undefined,
      }),
    ).toEqual({ action: 'give_up', memoryBudgetMiB: 31, why: 'budget_floor' });
  });

  it('retries a crash with the budget unchanged, and gives up after four in a row', () => {
    const input = { failure: crash, configuredBudgetMiB: 64, effectiveBudgetMiB: 64 };
    expect(planRecovery({ ...input, consecutiveFailures: 1 })).toEqual({
      action: 'retry',
      memoryBudgetMiB: 64,
    });
    expect(planRecovery({ ...input, consecutiveFailures: MAX_CONSECUTIVE_FAILURES })).toEqual({
      action: 'give_up',
      memoryBudgetMiB: 64,
      why: 'too_many_failures',
    });
    expect(
      planRecovery({ ...input, failure: oom, consecutiveFailures: MAX_CONSECUTIVE_FAILURES })
        .action,
    ).toBe('give_up');
  });
});

describe('describeRecovery', () => {
  it('says what ran out, where, and what the page does next', () => {
    expect(
      describeRecovery({
        failure: { kind: 'out_of_memory', message: 'memory access out of bounds' },
        activity: 'the Coder update (64 sequences)',
        plan: { action: 'retry', memoryBudgetMiB: 256 },
        savedStep: 3,
        consecutiveFailures: 1,
      }),
    ).toBe(
      'Ran out of memory in the Coder update (64 sequences); retrying from its last saved step (3) with smaller micro-batches (256 MiB).',
    );
  });

  it('names a crash by its message and says the run restarts', () => {
    expect(
      describeRecovery({
        failure: { kind: 'crash', message: 'Test failure' },
        activity: 'judging programs',
        plan: { action: 'retry', memoryBudgetMiB: undefined },
        savedStep: 0,
        consecutiveFailures: 1,
      }),
    ).toBe(
      'The engine failed in judging programs (Test failure); restarted it and retrying from its last saved step (0).',
    );
  });

  it('says why it stopped and what would fit', () => {
    const text = describeRecovery({
      failure: { kind: 'out_of_memory', message: 'Aborted()' },
      activity: 'sampling plans',
      plan: { action: 'give_up', memoryBudgetMiB: 20, why: 'budget_floor' },
      savedStep: 5,
      consecutiveFailures: 3,
    });
    expect(text).toMatch(/^Ran out of memory in sampling plans; stopped retrying: .* under 16 MiB/);
    expect(text).toContain('last saved step (5)');
    expect(text).toContain('fewer tasks per step');
    expect(
      describeRecovery({
        failure: { kind: 'crash', message: 'boom' },
        activity: 'a training step',
        plan: { action: 'give_up', memoryBudgetMiB: undefined, why: 'too_many_failures' },
        savedStep: 2,
        consecutiveFailures: 4,
      }),
    ).toContain('4 failures in a row');
  });
});
