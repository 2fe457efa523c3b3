import { create } from 'zustand';
import type { RunResult } from '../../engine/api';
import { judge } from '../engineClient';
import { exampleCode, exampleTests } from './example';
import { detectEntryPoint, parseTests } from './parseTests';

interface PlaygroundState {
  code: string;
  testsText: string;
  /** The function the tests call, as typed; '' = the one detectEntryPoint finds. */
  entryPoint: string;
  /** The entry point the shown verdicts called. */
  judgedEntryPoint: string | null;
  result: RunResult | null;
  error: string | null;
  running: boolean;
  setCode: (code: string) => void;
  setTestsText: (text: string) => void;
  setEntryPoint: (name: string) => void;
  run: () => Promise<void>;
}

export const usePlaygroundStore = create<PlaygroundState>((set, get) => ({
  code: exampleCode,
  testsText: exampleTests,
  entryPoint: '',
  judgedEntryPoint: null,
  result: null,
  error: null,
  running: false,
  setCode: (code) => set({ code }),
  setTestsText: (testsText) => set({ testsText }),
  setEntryPoint: (entryPoint) => set({ entryPoint }),
  run: async () => {
    const { code, testsText } = get();
    set({ running: true, error: null });
    try {
      const tests = parseTests(testsText);
      const typed = get().entryPoint.trim();
      if (typed && !/^[A-Za-z_$][\w$]*$/.test(typed))
        throw new Error(`Entry point "${typed}" is not a function name.`);
      const entryPoint = typed || detectEntryPoint(code);
      if (!entryPoint)
        throw new Error('No function found: declare one with `function name(...) {…}`.');
      // The engine Worker's sandbox pool: one pool for the whole page.
      const result = await judge(code, entryPoint, tests);
      set({ result, judgedEntryPoint: entryPoint });
    } catch (error) {
      set({
        error: error instanceof Error ? error.message : String(error),
        result: null,
        judgedEntryPoint: null,
      });
    } finally {
      set({ running: false });
    }
  },
}));
