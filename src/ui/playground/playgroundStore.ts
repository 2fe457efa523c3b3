import { create } from 'zustand';
import type { RunResult } from '../../engine/api';
import { judge } from '../engineClient';
import { exampleCode, exampleTests } from './example';
import { detectEntryPoint, parseTests } from './parseTests';

interface PlaygroundState {
  code: string;
  testsText: string;
  result: RunResult | null;
  error: string | null;
  running: boolean;
  setCode: (code: string) => void;
  setTestsText: (text: string) => void;
  run: () => Promise<void>;
}

export const usePlaygroundStore = create<PlaygroundState>((set, get) => ({
  code: exampleCode,
  testsText: exampleTests,
  result: null,
  error: null,
  running: false,
  setCode: (code) => set({ code }),
  setTestsText: (testsText) => set({ testsText }),
  run: async () => {
    const { code, testsText } = get();
    set({ running: true, error: null });
    try {
      const tests = parseTests(testsText);
      const entryPoint = detectEntryPoint(code);
      if (!entryPoint)
        throw new Error('No function found: declare one with `function name(...) {…}`.');
      // The engine Worker's sandbox pool: one pool for the whole page.
      const result = await judge(code, entryPoint, tests);
      set({ result });
    } catch (error) {
      set({ error: error instanceof Error ? error.message : String(error), result: null });
    } finally {
      set({ running: false });
    }
  },
}));
