// `npm run bench -- reward-server`: the reward server (the CLI, a child process) under load from
// concurrent HTTP clients, against the sandbox pool's own throughput on the same programs in the
// same run (the server's ceiling: same worker count, no HTTP, no JSON).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ProgramToJudge } from '../src/agents/judge';
import { rewardCompletions } from '../src/agents/rewardCompletions';
import { DEFAULT_REWARD_WEIGHTS } from '../src/rl/rewards';
import { createSandbox } from '../src/sandbox/nodeSandbox';
import { generateTasks, toJsonl } from '../src/tasks';
import type { BenchTable } from './table';

const TASKS = 120;
/** Programs per measured pass: every reference and a broken copy of each, repeated. */
const PROGRAMS = 1200;
const BATCH = 16;
const CLIENT_COUNTS = [1, 8, 32];
const SINGLE_PROGRAMS = 300;

function programs(): ProgramToJudge[] {
  const tasks = generateTasks({
    tiers: ['L1', 'L2', 'L3', 'L4'],
    split: 'train',
    count: TASKS,
    seed: 1,
  });
  const one = tasks.flatMap((task) => [
    ...task.strategies.map((s) => ({ task, completion: s.code })),
    {
      task,
      completion: task.strategies[0]!.code.replace(/\)\s*\{/, (m) => `${m} return undefined;`),
    },
  ]);
  return Array.from({ length: PROGRAMS }, (_, i) => one[i % one.length]!);
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function startServer(tasksFile: string, workers: number) {
  const cli = join(process.cwd(), 'scripts/cli.mjs');
  const args = [cli, 'rewardServer', '--tasks', tasksFile, '--port', '0'];
  const child = spawn(process.execPath, [...args, '--workers', String(workers)], { stdio: 'pipe' });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /POST (http:\/\/127\.0\.0\.1:\d+)\/get_reward/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`reward server exited ${code}: ${output}`)));
  });
  return { child, url };
}

/** Peak resident memory of a process (Linux), in MiB. */
function peakRssMb(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

/** `clients` loops draining one shared list of requests; latency per request. */
async function load(url: string, work: ProgramToJudge[], clients: number, batch: number) {
  const requests: string[] = [];
  for (let start = 0; start < work.length; start += batch) {
    const part = work.slice(start, start + batch);
    requests.push(
      JSON.stringify({
        query: part.map((p) => p.completion),
        labels: part.map((p) => p.task.id),
      }),
    );
  }
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < requests.length) {
        const body = requests[next++]!;
        const sent = performance.now();
        const response = await fetch(`${url}/get_reward`, { method: 'POST', body });
        if (response.status !== 200)
          throw new Error(`status ${response.status}: ${await response.text()}`);
        await response.json();
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies };
}

export async function rewardServerBench(): Promise<BenchTable> {
  const workers = availableParallelism();
  const work = programs();
  const dir = mkdtempSync(join(tmpdir(), 'bench-reward-'));
  const tasksFile = join(dir, 'tasks.jsonl');
  writeFileSync(tasksFile, toJsonl([...new Map(work.map((p) => [p.task.id, p.task])).values()]));

  // The ceiling: the same programs through the lab's reward path on a pool of the same size.
  const sandbox = await createSandbox({ size: workers });
  const poolRate = async () => {
    const started = performance.now();
    await rewardCompletions(sandbox, work, DEFAULT_REWARD_WEIGHTS);
    return work.length / ((performance.now() - started) / 1000);
  };
  let pool = 0;
  const rows: (string | number)[][] = [];
  const { child, url } = await startServer(tasksFile, workers);
  try {
    await poolRate(); // warm-up: QuickJS in every worker
    await load(url, work.slice(0, 200), 4, BATCH);
    pool = await poolRate();
    const measured: { clients: number; batch: number; rate: number; p50: number; p99: number }[] =
      [];
    for (const clients of CLIENT_COUNTS) {
      const { seconds, latencies } = await load(url, work, clients, BATCH);
      measured.push({
        clients,
        batch: BATCH,
        rate: work.length / seconds,
        p50: quantile(latencies, 0.5),
        p99: quantile(latencies, 0.99),
      });
    }
    const singles = work.slice(0, SINGLE_PROGRAMS);
    const single = await load(url, singles, 8, 1);
    measured.push({
      clients: 8,
      batch: 1,
      rate: singles.length / single.seconds,
      p50: quantile(single.latencies, 0.5),
      p99: quantile(single.latencies, 0.99),
    });
    pool = Math.max(pool, await poolRate()); // again after the load: the better of two
    rows.push([`sandbox pool, in process (no HTTP)`, '', work.length, pool, 1, '', '', '']);
    const rss = peakRssMb(child);
    for (const m of measured) {
      rows.push([
        `reward server, ${m.clients} client${m.clients > 1 ? 's' : ''}`,
        m.clients,
        m.batch,
        m.rate,
        m.rate / pool,
        m.p50,
        m.p99,
        rss,
      ]);
    }
  } finally {
    child.kill('SIGTERM');
    await sandbox.close();
  }
  return {
    title: 'Reward server: programs judged per second over HTTP, against the sandbox pool alone',
    environment: `Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} × ${availableParallelism()} (load average ${loadavg()[0]?.toFixed(1)} at the end); ${workers} sandbox workers in both; ${TASKS} tasks, ${work.length} programs (references and return-undefined mutants), the lab's default limits`,
    columns: [
      'variant',
      'clients',
      'programs/request',
      'programs/s',
      '× pool',
      'p50 ms/request',
      'p99 ms/request',
      'server peak RSS MiB',
    ],
    rows,
    notes: [
      'The server is the CLI (npm run reward-server) in a child process on 127.0.0.1; its peak RSS is its own (VmHWM), after every row. The pool row runs the same programs through the same reward code (agents/rewardCompletions.ts) on an in-process pool of the same size, best of two passes (before and after the load), so × pool is the cost of HTTP, JSON and queueing.',
      "programs/request 1 is verl compute_score's pattern (one completion a call); OpenRLHF and TRL send batches. Client and server share these cores, so the clients' JSON work counts against the server.",
    ],
  };
}
