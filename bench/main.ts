// `npm run bench`: every section prints one table; variants are compared as ratios
// measured in the same run, because these machines are shared and noisy.
// Usage: npm run bench [-- section-name ...] [flags]
// Sections' flags are declared here (the CLI refuses any other), and sections read them.

import type { FlagSpecs } from '../src/cli/flags';
import { commandLine, exitWhenWritten } from '../src/cli/runCli';
import { benchSections } from './sections';
import { type BenchSection, formatTable } from './table';

const FLAGS = {
  json: { kind: 'boolean', help: 'webgpu: one JSON object per row' },
  'no-build': { kind: 'boolean', help: 'charts, page: measure the existing dist/ build' },
  seconds: { kind: 'number', help: 'page: seconds of training to watch (default 60)' },
  path: { kind: 'string', help: "page: the page's path and query (default /)" },
  trace: {
    kind: 'boolean',
    help: "page: also record Chrome's timeline over 15 s and name the longest style and layout passes",
  },
} satisfies FlagSpecs;
const { words: only } = commandLine('bench', FLAGS, {
  usage: `npm run bench [-- ${Object.keys(benchSections).join('|')} …] [flags]`,
  words: { name: 'section', choices: Object.keys(benchSections), min: 0, max: Infinity },
});
const selected = Object.entries(benchSections as Record<string, BenchSection>).filter(
  ([name]) => only.length === 0 || only.includes(name),
);
for (const [name, section] of selected) {
  try {
    console.log(`${formatTable(await section())}\n`);
  } catch (error) {
    console.log(
      `## ${name}\n\nfailed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    process.exitCode = 1;
  }
}
await exitWhenWritten();
