// `npm run bench`: every section prints one table; variants are compared as ratios
// measured in the same run, because these machines are shared and noisy.
// Usage: npm run bench [-- section-name ...]

import { benchSections } from './sections';
import { type BenchSection, formatTable } from './table';

const only = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
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
process.exit();
