import { unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RUN_CONFIG, decodeRunConfig, encodeRunConfig } from '../../src/engine/runConfig';
import type { RunConfig } from '../../src/engine/types';
import { Rng } from '../../src/tasks';
import { filesToRun, metricsCsv, runToFiles } from '../../src/ui/persist/runFiles';
import { crc32, readZip, writeZip } from '../../src/ui/persist/zip';
import type { RunRecord } from '../../src/ui/state/labStore';

function seededRandom(seed: number) {
  const rng = new Rng(seed);
  return () => rng.next();
}

describe('run config in the URL', () => {
  it('the default config writes an empty query', () => {
    expect(encodeRunConfig(DEFAULT_RUN_CONFIG).toString()).toBe('');
  });

  it('round-trips random configs exactly', () => {
    const random = seededRandom(42);
    for (let i = 0; i < 50; i++) {
      const config: RunConfig = {
        ...DEFAULT_RUN_CONFIG,
        preset: (['tiny', 'small', 'base'] as const)[Math.floor(random() * 3)]!,
        tierMix: { L1: 1 + Math.floor(random() * 3), L3: 2, L4: Math.floor(random() * 2) + 1 },
        evalEvery: Math.floor(random() * 20),
        grpo: {
          ...DEFAULT_RUN_CONFIG.grpo,
          mode: (['core', 'single', 'frozen-planner'] as const)[Math.floor(random() * 3)]!,
          plansPerTask: 2 + Math.floor(random() * 6),
          programsPerPlan: 2 + Math.floor(random() * 6),
          beta: Math.round(random() * 100) / 1000,
          epsilonHigh: 0.28,
          learningRate: random() * 1e-3,
          temperature: 0.5 + random(),
          lossType: (['grpo', 'dapo', 'dr_grpo'] as const)[Math.floor(random() * 3)]!,
          seed: Math.floor(random() * 1000),
          rewardWeights: { ...DEFAULT_RUN_CONFIG.grpo.rewardWeights, efficiency: random() },
        },
      };
      const url = `?${encodeRunConfig(config).toString()}`;
      const { config: back, problems } = decodeRunConfig(new URLSearchParams(url));
      expect(problems).toEqual([]);
      expect(back).toEqual(config);
    }
  });

  it('reports bad values and keeps defaults for them', () => {
    const { config, problems } = decodeRunConfig(new URLSearchParams('preset=huge&tiers=L9:1&n=0'));
    expect(config.preset).toBe('tiny');
    expect(problems.join('\n')).toMatch(/preset "huge"/);
    expect(problems.join('\n')).toMatch(/tiers "L9:1"/);
    expect(problems.join('\n')).toMatch(/plansPerTask/);
  });
});

describe('run export files', () => {
  const random = seededRandom(7);
  const bytes = (n: number) => Uint8Array.from({ length: n }, () => Math.floor(random() * 256));

  it('crc32 matches the known check value', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('zip round-trips random files and refuses corruption', () => {
    const files = { 'a.txt': bytes(10), 'dir/b.bin': bytes(5000), empty: new Uint8Array() };
    const zip = writeZip(files);
    expect(readZip(zip)).toEqual(files);
    const corrupt = zip.slice();
    corrupt[40] = (corrupt[40]! + 1) % 256; // inside a.txt's data
    expect(() => readZip(corrupt)).toThrow(/checksum|corrupt/);
    expect(() => readZip(zip.slice(0, 100))).toThrow(/ZIP/);
  });

  it('a run exports and imports back identical', () => {
    const run: RunRecord = {
      id: 'run-x',
      name: 'run 1',
      config: DEFAULT_RUN_CONFIG,
      createdAt: 1,
      visible: true,
      points: [
        { step: 1, values: { 'coder/reward': 0.25, 'planner/reward': 0.1 } },
        { step: 2, values: { 'coder/reward': 0.5, 'eval/pass@1/L1': 0.3 } },
      ],
    };
    const snapshot = {
      step: 2,
      config: DEFAULT_RUN_CONFIG,
      files: { 'planner/model.safetensors': bytes(64) },
    };
    const back = filesToRun(readZip(writeZip(runToFiles(run, [], snapshot))));
    expect(back.run).toEqual(run);
    expect(back.snapshot).toEqual(snapshot);
    expect(metricsCsv(run.points).split('\n')[0]).toBe(
      'step,coder/reward,eval/pass@1/L1,planner/reward',
    );
  });

  it('imports a run that was unzipped and zipped again with an ordinary (deflating) tool', () => {
    const run: RunRecord = {
      id: 'run-y',
      name: 'run 2',
      config: DEFAULT_RUN_CONFIG,
      createdAt: 2,
      visible: true,
      points: [{ step: 1, values: { 'coder/reward': 0.75 } }],
    };
    const snapshot = {
      step: 1,
      config: DEFAULT_RUN_CONFIG,
      files: { 'coder/model.safetensors': new Uint8Array(4096).fill(7) },
    };
    const exported = readZip(writeZip(runToFiles(run, [], snapshot)));
    // What `zip -r run.zip run-y/` or a desktop's "Compress" makes: every entry deflated,
    // the files under one folder, folder entries, and macOS's metadata beside them.
    const rezipped = zipSync(
      {
        'run-y/': new Uint8Array(),
        'run-y/snapshot/': new Uint8Array(),
        ...Object.fromEntries(Object.entries(exported).map(([n, d]) => [`run-y/${n}`, d])),
        '__MACOSX/run-y/._run.json': new Uint8Array(3),
      },
      { level: 9 },
    );
    const methods = new Map<string, number>();
    unzipSync(rezipped, {
      filter: (f) => {
        methods.set(f.name, f.compression);
        return false;
      },
    });
    expect(methods.get('run-y/run.json')).toBe(8); // deflate
    expect(methods.get('run-y/snapshot/coder/model.safetensors')).toBe(8);
    const back = filesToRun(readZip(rezipped));
    expect(back.run).toEqual(run);
    expect(back.snapshot).toEqual(snapshot);
    // A flipped byte in a deflated entry's data is refused, as in a stored one.
    const name = new TextEncoder().encode('run-y/metrics.csv');
    const header = Buffer.from(rezipped).indexOf(name) - 30; // its local header
    const view = new DataView(rezipped.buffer);
    const data = header + 30 + name.length + view.getUint16(header + 28, true);
    const corrupt = rezipped.slice();
    corrupt[data + 3] = (corrupt[data + 3]! + 1) % 256;
    expect(() => readZip(corrupt)).toThrow(/checksum|corrupt/);
  });

  it('refuses a file that is not a run export, naming what is wrong', () => {
    expect(() => filesToRun({ 'x.json': bytes(3) })).toThrow(/run\.json is missing/);
    expect(() => filesToRun({ 'run.json': new TextEncoder().encode('{oops') })).toThrow(
      /not valid JSON/,
    );
  });
});
