// `npm run reward-server -- --tasks FILE.jsonl [--port 5000] [--host 127.0.0.1]`: the lab's
// judge as an HTTP reward service in OpenRLHF's remote reward protocol (rewardProtocol.ts), for
// OpenRLHF, verl and TRL (docs/SCALE-OUT.md). Programs run in the QuickJS sandbox pool, a
// worker per core, with the lab's per-program limits. Bound to 127.0.0.1 by default: whoever can
// reach the port can make the machine run code (contained, but CPU is theirs), and there is no
// authentication; --host 0.0.0.0 exposes it on purpose.
import { availableParallelism } from 'node:os';
import { createSandbox } from '../sandbox/nodeSandbox';
import type { Task } from '../tasks';
import { parseExportedTasks } from '../tasks/importJsonl';
import type { FlagSpecs } from './flags';
import { readTextFile } from './jsonFiles';
import { type EfficiencyBaseline, startRewardService } from './rewardService';
import { commandLine, UsageError } from './runCli';

const FLAGS = {
  tasks: {
    kind: 'string',
    help: 'task JSONL written by `tasks -- export` (FILE or FILE,FILE); labels are its task ids',
  },
  port: { kind: 'integer', help: 'TCP port (default 5000; 0 picks a free one)' },
  host: { kind: 'string', help: 'address to bind (default 127.0.0.1; 0.0.0.0 exposes it)' },
  workers: { kind: 'integer', help: 'sandbox workers (default: one per core)' },
  'max-batch': { kind: 'integer', help: 'most queries in one request (default 1024)' },
  'max-queue': {
    kind: 'integer',
    help: 'most programs waiting or running before requests get 429 (default 8192)',
  },
  'max-body-mb': { kind: 'number', help: 'largest request body in MiB (default 32)' },
  efficiency: {
    kind: 'choice',
    choices: ['batch', 'reference'],
    help: "efficiency baseline: the task's other passing programs in the request (batch, the lab's) or also its reference solutions",
  },
} as const satisfies FlagSpecs;

const { flags } = commandLine('reward-server', FLAGS, {
  usage: 'npm run reward-server -- --tasks FILE.jsonl [--port 5000] [--host 127.0.0.1]',
});

const positive = (name: keyof typeof FLAGS, value: number | undefined, fallback: number) => {
  const chosen = value ?? fallback;
  if (!(chosen > 0)) throw new UsageError(`--${name} must be above 0, got ${chosen}`);
  return chosen;
};

if (!flags.tasks) {
  throw new UsageError('--tasks FILE.jsonl is required (write one with `npm run tasks -- export`)');
}
const port = flags.port ?? 5000;
if (port < 0 || port > 65535) throw new UsageError(`--port must be 0–65535, got ${port}`);
const host = flags.host ?? '127.0.0.1';
const workers = positive('workers', flags.workers, availableParallelism());
const maxBatch = positive('max-batch', flags['max-batch'], 1024);
const maxQueue = positive('max-queue', flags['max-queue'], 8192);
if (maxQueue < maxBatch) {
  throw new UsageError(`--max-queue (${maxQueue}) must be at least --max-batch (${maxBatch})`);
}
const maxBodyBytes = Math.round(positive('max-body-mb', flags['max-body-mb'], 32) * 1024 * 1024);

const files = flags.tasks.split(',').filter((file) => file !== '');
const tasks: Task[] = [];
const seen = new Map<string, string>();
for (const file of files) {
  for (const task of parseExportedTasks(await readTextFile(file), file)) {
    const other = seen.get(task.id);
    if (other) throw new Error(`${file}: task id "${task.id}" is also in ${other}`);
    seen.set(task.id, file);
    tasks.push(task);
  }
}

const sandbox = await createSandbox({ size: workers });
const service = await startRewardService({
  tasks,
  taskSource: files.join(', '),
  sandbox,
  host,
  port,
  maxBodyBytes,
  maxBatch,
  maxQueued: maxQueue,
  efficiencyBaseline: (flags.efficiency ?? 'batch') as EfficiencyBaseline,
}).catch(async (error: NodeJS.ErrnoException) => {
  await sandbox.close();
  if (error.code === 'EADDRINUSE') throw new Error(`${host}:${port} is in use (--port)`);
  if (error.code === 'EADDRNOTAVAIL')
    throw new Error(`${host} is not an address of this machine (--host)`);
  throw error;
});

console.log(
  `reward server: ${tasks.length} tasks from ${files.join(', ')}, ${workers} sandbox workers; POST ${service.url}/get_reward, GET ${service.url}/health`,
);
if (host !== '127.0.0.1' && host !== 'localhost' && host !== '::1') {
  console.log(
    `reward server: listening on ${host}: anyone who can reach this port can have the machine run programs (sandboxed, no authentication); keep it inside a private network`,
  );
}

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`reward server: ${signal}, finishing the requests in flight`);
  await service.close();
  await sandbox.close();
  const { requests, programs, refused } = service.stats();
  console.log(
    `reward server: stopped after ${requests} requests, ${programs} programs judged, ${refused} refused`,
  );
  process.exit(0);
};
process.once('SIGINT', () => void stop('SIGINT'));
process.once('SIGTERM', () => void stop('SIGTERM'));
