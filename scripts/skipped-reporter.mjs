// A Vitest reporter for `npm test` (scripts/test-all.mjs): writes every skipped test, with
// the reason given to `ctx.skip(reason)`, as JSON to the file named by $SKIPPED_REPORT.
// Vitest's JSON report counts skipped tests but drops their reasons.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

export default class SkippedReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules) {
    const out = process.env.SKIPPED_REPORT;
    if (!out) return;
    const skipped = [];
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        skipped.push({
          file: relative(this.root, module.moduleId),
          name: test.fullName,
          reason: test.result().note ?? null,
        });
      }
    }
    writeFileSync(out, JSON.stringify(skipped, null, 1));
  }
}
