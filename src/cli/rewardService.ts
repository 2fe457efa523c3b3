// The reward server's HTTP side (Node's http module): routes, limits, the bounded queue and a
// graceful close. Scoring is the lab's own (agents/rewardCompletions.ts on the sandbox pool the
// caller hands in); the protocol's parsing and answer are in rewardProtocol.ts. The entry point
// is rewardServer.ts; tests start this on port 0.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { judgePrograms } from '../agents/judge';
import { rewardCompletions } from '../agents/rewardCompletions';
import { DEFAULT_REWARD_WEIGHTS, passesAll, type RewardWeights } from '../rl/rewards';
import type { Sandbox } from '../sandbox/types';
import type { Task } from '../tasks';
import { parseRewardRequest, rewardAnswer } from './rewardProtocol';

/** How a passing program's efficiency is measured: against the other passing programs of its
 * task in the same request (the lab's step), or also against the task's reference solutions
 * (meaningful when a trainer sends one completion per request, as verl's compute_score does). */
export type EfficiencyBaseline = 'batch' | 'reference';

export interface RewardServiceOptions {
  tasks: readonly Task[];
  /** Where the tasks came from, for messages ("runs/verl/train.tasks.jsonl"). */
  taskSource: string;
  sandbox: Sandbox;
  host: string;
  port: number;
  /** Largest request body, in bytes (413 above). */
  maxBodyBytes: number;
  /** Most queries in one request (413 above). */
  maxBatch: number;
  /** Most programs admitted at once, running or waiting (429 above). */
  maxQueued: number;
  weights?: RewardWeights;
  efficiencyBaseline?: EfficiencyBaseline;
}

export interface RewardServiceStats {
  requests: number;
  programs: number;
  refused: number;
  queued: number;
}

export interface RewardService {
  url: string;
  port: number;
  stats(): RewardServiceStats;
  /** Stops accepting connections and waits for the requests in flight. */
  close(): Promise<void>;
}

const ROUTES = 'the server answers POST /get_reward and GET /health';
/** Window over which throughput is measured for Retry-After. */
const RATE_WINDOW_MS = 10_000;

export async function startRewardService(options: RewardServiceOptions): Promise<RewardService> {
  const tasks = new Map(options.tasks.map((task) => [task.id, task]));
  const weights = options.weights ?? DEFAULT_REWARD_WEIGHTS;
  const referenceCosts = new Map<string, number>();
  const referenceDone = new Set<string>();
  const finished: { at: number; programs: number }[] = [];
  const stats: RewardServiceStats = { requests: 0, programs: 0, refused: 0, queued: 0 };
  let inFlight = 0;
  let closing = false;
  let drained: (() => void) | null = null;

  const send = (res: ServerResponse, status: number, body: unknown, headers = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };
  const refuse = (res: ServerResponse, status: number, error: string, headers = {}) => {
    stats.refused++;
    send(res, status, { error }, headers);
  };

  /** Seconds until the queue has room, from the recent throughput (at least 1). */
  const retryAfter = (): number => {
    const now = Date.now();
    while (finished.length > 0 && now - (finished[0]?.at ?? now) > RATE_WINDOW_MS) finished.shift();
    const done = finished.reduce((sum, entry) => sum + entry.programs, 0);
    const rate = done / (RATE_WINDOW_MS / 1000);
    return Math.min(60, Math.max(1, Math.ceil(stats.queued / Math.max(rate, 1))));
  };

  /** The cheapest passing reference of each new task, measured once on the same sandbox. */
  const measureReferences = async (batch: readonly Task[]) => {
    const fresh = [...new Set(batch.filter((task) => !referenceDone.has(task.id)))];
    if (fresh.length === 0) return;
    const programs = fresh.flatMap((task) =>
      task.strategies.map((strategy) => ({ task, completion: strategy.code })),
    );
    const judged = await judgePrograms(options.sandbox, programs);
    programs.forEach(({ task }, index) => {
      const outcome = judged[index]?.outcome;
      referenceDone.add(task.id);
      if (!outcome || !passesAll(outcome) || outcome.cost === null) return;
      referenceCosts.set(task.id, Math.min(referenceCosts.get(task.id) ?? Infinity, outcome.cost));
    });
  };

  const readBody = (req: IncomingMessage): Promise<string | null> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBodyBytes) {
          req.removeAllListeners('data');
          req.resume();
          resolve(null);
        } else chunks.push(chunk);
      });
      req.on('end', () =>
        resolve(size > options.maxBodyBytes ? null : Buffer.concat(chunks).toString('utf8')),
      );
      req.on('error', reject);
    });

  const getReward = async (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    const tooLarge = `request body is over the server's limit of ${options.maxBodyBytes} bytes (--max-body-mb): send fewer queries a request`;
    if (declared > options.maxBodyBytes) {
      req.resume();
      return refuse(res, 413, tooLarge, { connection: 'close' });
    }
    const body = await readBody(req);
    if (body === null) return refuse(res, 413, tooLarge, { connection: 'close' });
    const parsed = parseRewardRequest(body, tasks, options.maxBatch, options.taskSource);
    if (!parsed.ok) return refuse(res, parsed.status, parsed.error);
    const count = parsed.programs.length;
    if (stats.queued > 0 && stats.queued + count > options.maxQueued) {
      const seconds = retryAfter();
      return refuse(
        res,
        429,
        `the sandbox queue is full (${stats.queued} programs waiting or running, limit ${options.maxQueued}, --max-queue): retry in ${seconds} s`,
        { 'retry-after': String(seconds) },
      );
    }
    stats.queued += count;
    try {
      if (options.efficiencyBaseline === 'reference') {
        await measureReferences(parsed.programs.map((program) => program.task));
      }
      const rewarded = await rewardCompletions(
        options.sandbox,
        parsed.programs,
        weights,
        options.efficiencyBaseline === 'reference' ? referenceCosts : undefined,
      );
      stats.programs += count;
      finished.push({ at: Date.now(), programs: count });
      send(res, 200, rewardAnswer(rewarded));
    } finally {
      stats.queued -= count;
    }
  };

  const health = (res: ServerResponse) =>
    send(res, 200, {
      status: closing ? 'closing' : 'ok',
      tasks: tasks.size,
      task_source: options.taskSource,
      efficiency_baseline: options.efficiencyBaseline ?? 'batch',
      queued_programs: stats.queued,
      max_queue: options.maxQueued,
      max_batch: options.maxBatch,
      requests: stats.requests,
      judged_programs: stats.programs,
      refused_requests: stats.refused,
      rss_bytes: process.memoryUsage().rss,
      peak_rss_bytes: process.resourceUsage().maxRSS * 1024,
    });

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    stats.requests++;
    const path = (req.url ?? '/').split('?')[0];
    if (closing) return refuse(res, 503, 'the server is shutting down', { connection: 'close' });
    if (path === '/health') {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return refuse(res, 405, `/health answers GET, not ${req.method}`, { allow: 'GET' });
      }
      return health(res);
    }
    if (path === '/get_reward') {
      if (req.method !== 'POST') {
        return refuse(res, 405, `/get_reward answers POST, not ${req.method}`, { allow: 'POST' });
      }
      return getReward(req, res);
    }
    req.resume();
    return refuse(res, 404, `no route ${req.method} ${path}: ${ROUTES}`);
  };

  const server = createServer((req, res) => {
    inFlight++;
    handle(req, res)
      .catch((error) => {
        if (!res.headersSent) {
          refuse(
            res,
            500,
            `judging failed: ${error instanceof Error ? error.message : String(error)}`,
          );
        } else res.destroy();
      })
      .finally(() => {
        inFlight--;
        if (inFlight === 0) drained?.();
      });
  });
  // A trainer keeps its connection open between batches; a slow batch is not a dead client.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    stats: () => ({ ...stats }),
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
      server.closeAllConnections();
      await closed;
    },
  };
}
