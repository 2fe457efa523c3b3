// `npm test`: typecheck, lint and the page's build at once and beside the unit tests, then the
// browser tests on the built page.
// `npm run test:long` (`--long`): the checks that need minutes (tests/long). Each ends with one line `N passed, N failed[, N skipped]` counted from the runners' reports,
// after the list of skipped tests with their reasons (a test without a WebGPU adapter, say,
// skips with `ctx.skip('no WebGPU adapter: …')`; it is never counted as passed).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const swiftShader = '/usr/lib/chromium/vk_swiftshader_icd.json';
const env = { ...process.env, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' };
// WebGPU in Node (Dawn) needs a Vulkan driver; on GPU-less machines Chromium ships SwiftShader.
if (!env.VK_ICD_FILENAMES && existsSync(swiftShader)) env.VK_ICD_FILENAMES = swiftShader;

const reports = mkdtempSync(join(tmpdir(), 'core-code-tests-'));
const totals = { passed: 0, failed: 0, skipped: 0 };
/** Skipped tests, `suite: file › test — reason`. */
const skippedTests = [];

/** Seconds each phase took, printed before the summary so a slow phase is easy to see. */
const phaseSeconds = [];
const startedAt = Date.now();

async function step(title, command, args, extraEnv = {}) {
  console.log(`\n=== ${title}: ${command} ${args.join(' ')}`);
  const started = Date.now();
  const code = await new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit', env: { ...env, ...extraEnv } });
    child.on('close', resolve);
  });
  phaseSeconds.push(`${title} ${Math.round((Date.now() - started) / 1000)} s`);
  return code === 0;
}

/**
 * Checks that need one core each and no quiet (typecheck, lint, the page's build), run at
 * once; each one's output printed whole when it ends.
 */
async function checksAtOnce(checks) {
  const started = Date.now();
  const results = await Promise.all(
    checks.map(
      ({ title, command, args }) =>
        new Promise((resolve) => {
          const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
          let output = '';
          child.stdout.on('data', (chunk) => {
            output += chunk;
          });
          child.stderr.on('data', (chunk) => {
            output += chunk;
          });
          child.on('close', (code) => {
            console.log(`\n=== ${title}: ${command} ${args.join(' ')}\n${output}`);
            resolve({ title, ok: code === 0 });
          });
        }),
    ),
  );
  phaseSeconds.push(
    `${checks.map((c) => c.title).join(' + ')} ${Math.round((Date.now() - started) / 1000)} s`,
  );
  return Object.fromEntries(results.map((r) => [r.title, r.ok]));
}

async function vitestSuite(title, config) {
  const report = join(reports, `${title}.json`);
  const skippedReport = join(reports, `${title}-skipped.json`);
  const ok = await step(
    title,
    'npx',
    [
      'vitest',
      'run',
      '--config',
      config,
      '--reporter=default',
      '--reporter=json',
      '--reporter=./scripts/skipped-reporter.mjs',
      `--outputFile.json=${report}`,
    ],
    { SKIPPED_REPORT: skippedReport },
  );
  if (!existsSync(report)) {
    totals.failed += 1; // the runner died before reporting: count the suite as one failure
    return;
  }
  const json = JSON.parse(readFileSync(report, 'utf8'));
  totals.passed += json.numPassedTests;
  totals.failed += json.numFailedTests;
  totals.skipped += json.numPendingTests + json.numTodoTests;
  const reasons = existsSync(skippedReport) ? JSON.parse(readFileSync(skippedReport, 'utf8')) : [];
  for (const test of reasons) {
    skippedTests.push(
      `${title}: ${test.file} › ${test.name} — ${test.reason ?? 'no reason given'}`,
    );
  }
  // A file that failed to load has no tests to count; still a failure.
  if (!ok && json.numFailedTests === 0) totals.failed += Math.max(1, json.numFailedTestSuites);
}

if (process.argv.includes('--long')) {
  await vitestSuite('long', 'vitest.long.config.ts');
} else {
  // The checks start beside the unit tests: typecheck alone holds one core for ~20 s while
  // lint and the build end in seconds, and the unit files fill the other core meanwhile. They
  // end long before the unit phase does; the browser (which needs the build) waits for them.
  const checks = checksAtOnce([
    // Three type worlds (tsconfig.json: engine without DOM or Node, page, Node-only code).
    { title: 'typecheck', command: 'npx', args: ['tsc', '-b', 'tsconfig.json'] },
    { title: 'lint', command: 'npx', args: ['biome', 'check', '.'] },
    // The page the browser tests load.
    { title: 'build', command: 'npx', args: ['vite', 'build', '--logLevel', 'warn'] },
  ]);
  await vitestSuite('unit', 'vitest.config.ts');
  const ok = await checks;
  for (const title of ['typecheck', 'lint']) {
    if (ok[title]) totals.passed += 1;
    else totals.failed += 1;
  }
  if (ok.build) await vitestSuite('browser', 'vitest.browser.config.ts');
  else totals.failed += 1;
}

if (skippedTests.length > 0) {
  console.log(`\nSkipped (${skippedTests.length}):`);
  for (const line of skippedTests) console.log(`  ${line}`);
}
console.log(
  `\nTime per phase: ${phaseSeconds.join(', ')}; in all ${Math.round((Date.now() - startedAt) / 1000)} s`,
);
const skipped = totals.skipped ? `, ${totals.skipped} skipped` : '';
console.log(`\n${totals.passed} passed, ${totals.failed} failed${skipped}`);
process.exit(totals.failed === 0 ? 0 : 1);
