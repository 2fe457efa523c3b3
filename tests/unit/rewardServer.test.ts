// The reward server as a trainer meets it: the real CLI in a child process (so its resident
// memory is its own) on 127.0.0.1, 120 exported tasks, 8 concurrent clients; every reward is
// checked against the lab's own path (judgePrograms + assignCredit, as a GRPO step pays the
// Coder). Then the limits on an in-process server started on port 0, the exported datasets read
// back, and the exported Python reward file run with python3 against the server.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignCredit } from '../../src/agents/credit';
import { judgePrograms } from '../../src/agents/judge';
import { completionOf } from '../../src/cli/rewardProtocol';
import { type RewardService, startRewardService } from '../../src/cli/rewardService';
import { coderRewards, DEFAULT_REWARD_WEIGHTS } from '../../src/rl/rewards';
import { createSandbox } from '../../src/sandbox/nodeSandbox';
import type { Sandbox } from '../../src/sandbox/types';
import { generateTasks, type Task, toJsonl } from '../../src/tasks';
import { enginePrompt, verlRow } from '../../src/tasks/exportFormats';
import { writeEngineExport } from '../../src/tasks/exportNode';
import { parseExportedTasks } from '../../src/tasks/importJsonl';

const TASK_COUNT = 120;
const CLIENTS = 8;
const GB = 1024 ** 3;

interface Answer {
  rewards: number[];
  scores: number[];
  extra_logs: Record<string, number[]>;
}
interface Item {
  task: Task;
  completion: string;
}

/** The reference with `return undefined;` as its body's first statement. */
function mutant(code: string): string {
  const out = code.replace(/\)\s*\{/, (open) => `${open} return undefined;`);
  if (out === code) throw new Error(`no function body in ${code}`);
  return out;
}

/** Programs that try to hang, exhaust, escape or fake a pass. None may earn above 0. */
const HOSTILE = [
  'function solve(a) { while (true) {} }',
  'function solve(a) { const b = []; for (;;) b.push(new Array(1e5).fill(1)); }',
  'function solve(a) { let s = "x"; for (;;) s += s; }',
  'function solve(a) { return solve(a) + 1; }',
  'function solve(a) { return require("fs").readFileSync("/etc/passwd", "utf8"); }',
  'function solve(a) { return process.env.HOME + String(globalThis.fetch); }',
  'function solve(a) { return (function () {}).constructor("return process")().mainModule.require("child_process").execSync("id").toString(); }',
  // Fake passes: redefine what a judge inside the sandbox would use, then answer nonsense.
  'function solve(a) { JSON.stringify = () => "true"; Object.prototype.toJSON = () => true; globalThis.assert = () => true; Array.prototype.every = () => true; return "__never_expected__"; }',
  'function solve(a) { throw { passed: true, passCount: 99 }; }',
  'I would rather not write any code.',
];

const post = async (url: string, body: string) => {
  const response = await fetch(`${url}/get_reward`, { method: 'POST', body });
  return { status: response.status, headers: response.headers, json: await response.json() };
};
const postItems = async (url: string, items: readonly Item[], prompts?: string[]) => {
  const query = items.map((item, i) => (prompts?.[i] ?? '') + item.completion);
  const labels = items.map((item) => item.task.id);
  const answer = await post(url, JSON.stringify({ query, prompts, labels }));
  expect(answer.status, JSON.stringify(answer.json)).toBe(200);
  return answer.json as Answer;
};

/** The lab's reward for one request's items: judged in one batch, then each task's programs
 * paid by assignCredit (a task's programs as one plan's group, single-agent mode). */
async function labRewards(sandbox: Sandbox, items: readonly Item[]): Promise<number[]> {
  const judged = await judgePrograms(sandbox, items);
  const out: number[] = new Array(items.length);
  for (const id of new Set(items.map((item) => item.task.id))) {
    const members = items.flatMap((item, index) => (item.task.id === id ? [index] : []));
    const credit = assignCredit(
      [members.map((index) => judged[index]!.outcome)],
      { plansPerTask: 1, programsPerPlan: members.length, withPlans: false },
      DEFAULT_REWARD_WEIGHTS,
      'group',
    );
    members.forEach((index, k) => {
      out[index] = credit.coder.rewards[k]!.total;
    });
  }
  return out;
}

describe('reward server (npm run reward-server, a child process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'reward-server-'));
  const tasks = generateTasks({
    tiers: ['L1', 'L2', 'L3', 'L4'],
    split: 'train',
    count: TASK_COUNT,
    seed: 11,
  });
  let child: ChildProcess;
  let url = '';
  let output = '';
  let labSandbox: Sandbox;

  beforeAll(async () => {
    writeEngineExport('openrlhf', tasks, 'train', dir);
    labSandbox = await createSandbox({ size: 1 });
    const cli = join(process.cwd(), 'scripts/cli.mjs');
    const args = [cli, 'rewardServer', '--tasks', join(dir, 'train.tasks.jsonl')];
    child = spawn(process.execPath, [...args, '--port', '0'], { stdio: 'pipe' });
    url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const match = /POST (http:\/\/127\.0\.0\.1:\d+)\/get_reward/.exec(output);
        if (match?.[1]) resolve(match[1]);
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code) => reject(new Error(`server exited ${code}: ${output}`)));
    });
  }, 60_000);

  afterAll(async () => {
    await labSandbox?.close();
    if (child && child.exitCode === null) child.kill('SIGKILL');
  });

  it('pays 8 concurrent clients the lab reward: references ≥ 1, mutants below, hostile ≤ 0', async () => {
    // One request per few tasks, all of a task's programs in the same request (the efficiency
    // term compares them); queries carry their prompt, as OpenRLHF sends them.
    const requests: { items: Item[]; prompts: string[] }[] = [];
    for (let start = 0; start < tasks.length; start += 5) {
      const items = tasks.slice(start, start + 5).flatMap((task) => [
        ...task.strategies.map((s) => ({ task, completion: `\n${s.code}\n` })),
        {
          task,
          completion: `Here it is:\n\`\`\`js\n${mutant(task.strategies[0]!.code)}\n\`\`\``,
        },
      ]);
      const prompts = items.map(
        (item) => `<|user|>${enginePrompt(item.task)[0]!.content}<|assistant|>`,
      );
      requests.push({ items, prompts });
    }
    const hostile = HOSTILE.map((completion, i) => ({ task: tasks[i]!, completion }));
    const answers: Answer[] = new Array(requests.length);
    let hostileAnswer: Answer | null = null;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        if (client === 0) hostileAnswer = await postItems(url, hostile);
        for (let r = client; r < requests.length; r += CLIENTS) {
          answers[r] = await postItems(url, requests[r]!.items, requests[r]!.prompts);
        }
      }),
    );

    for (const [r, { items }] of requests.entries()) {
      const answer = answers[r]!;
      const lab = await labRewards(labSandbox, items);
      expect(answer.rewards).toEqual(lab); // the same numbers as the lab's own path
      items.forEach((item, i) => {
        const reward = answer.rewards[i]!;
        const isMutant = i === items.length - 1 || items[i + 1]?.task !== item.task;
        if (!isMutant) {
          expect(reward, `${item.task.id} reference`).toBeGreaterThanOrEqual(1);
          expect(answer.scores[i]).toBe(1);
        } else {
          const best = Math.min(
            ...answer.rewards.filter((_, k) => items[k]!.task === item.task && k !== i),
          );
          expect(reward, `${item.task.id} mutant`).toBeLessThan(best);
        }
      });
      for (const list of Object.values(answer.extra_logs)) expect(list).toHaveLength(items.length);
    }
    const refused = hostileAnswer as Answer | null;
    expect(refused?.rewards).toHaveLength(HOSTILE.length);
    refused?.rewards.forEach((reward, i) => {
      expect(reward, HOSTILE[i]).toBeLessThanOrEqual(0);
    });
  }, 120_000);

  it('answers malformed bodies and unknown task ids with a 4xx in words, then keeps answering', async () => {
    const bad = await post(url, '{"query": ["function solve(a) {}"], "labels": [');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/not JSON/);
    const unknown = await post(url, JSON.stringify({ query: ['x'], labels: ['no-such-task'] }));
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatch(/unknown task id: labels\[0\] = "no-such-task"/);
    const uneven = await post(url, JSON.stringify({ query: ['x', 'y'], labels: [tasks[0]!.id] }));
    expect(uneven.status).toBe(400);
    expect(uneven.json.error).toMatch(/2 queries but 1 labels/);
    const wrongMethod = await fetch(`${url}/get_reward`);
    expect(wrongMethod.status).toBe(405);
    expect((await wrongMethod.json()).error).toMatch(/answers POST/);

    const health = await (await fetch(`${url}/health`)).json();
    expect(health.status).toBe('ok');
    expect(health.tasks).toBe(TASK_COUNT);
    const task = tasks[3]!;
    const again = await postItems(url, [{ task, completion: task.strategies[0]!.code }]);
    expect(again.rewards[0]).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('stays under 1.5 GB resident (the server process alone)', async () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const peakKb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]);
    expect(peakKb * 1024).toBeGreaterThan(0);
    expect(peakKb * 1024).toBeLessThan(1.5 * GB);
    const health = await (await fetch(`${url}/health`)).json();
    expect(health.peak_rss_bytes).toBeLessThan(1.5 * GB);
  });

  it('the exported Python reward file (python3, stdlib only) gives the server’s rewards', async () => {
    const picked = [0, 1, 2, 3].map((i) => tasks[i]!);
    const items: Item[] = picked.flatMap((task) => [
      { task, completion: task.strategies[0]!.code },
      { task, completion: mutant(task.strategies[0]!.code) },
    ]);
    items.push({ task: picked[0]!, completion: 'no code here' });
    const batch = await postItems(url, items);
    const singles = await Promise.all(
      items.map(async (item) => (await postItems(url, [item])).rewards[0]!),
    );
    const prompt = '<|user|>write it<|assistant|>';
    const script = `
import json, sys
sys.path.insert(0, ${JSON.stringify(dir)})
import core_code_reward as r
items = json.load(sys.stdin)
texts = [i["completion"] for i in items]
ids = [i["task_id"] for i in items]
print(json.dumps({
  "verl": [r.compute_score("core-code-lab", t, g, {"index": 0}) for t, g in zip(texts, ids)],
  "verl_batch": r.compute_score_batch(["core-code-lab"] * len(texts), texts, ids, [{}] * len(texts)),
  "trl": r.trl_reward(prompts=[[{"role": "user", "content": "x"}]] * len(texts),
                      completions=[[{"role": "assistant", "content": t}] for t in texts], task_id=ids),
  "openrlhf": r.reward_func([${JSON.stringify(prompt)} + t for t in texts], [${JSON.stringify(prompt)}] * len(texts), ids),
}))`;
    const run = spawnSync('python3', ['-c', script], {
      input: JSON.stringify(
        items.map((item) => ({ completion: item.completion, task_id: item.task.id })),
      ),
      env: { ...process.env, CORE_CODE_REWARD_URL: url },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const out = JSON.parse(run.stdout) as {
      verl: number[];
      verl_batch: number[];
      trl: number[];
      openrlhf: Answer;
    };
    expect(out.verl).toEqual(singles); // compute_score: one completion a request
    expect(out.trl).toEqual(batch.rewards); // a TRL batch: one request
    expect(out.verl_batch).toEqual(batch.rewards); // verl's batch reward manager
    expect(out.openrlhf).toEqual(batch);
  }, 60_000);

  it('stops on SIGTERM after the requests in flight, saying so', async () => {
    const task = tasks[5]!;
    const inFlight = postItems(url, [
      { task, completion: 'function solve(a) { while (true) {} }' },
    ]);
    // SIGTERM only once the server holds the request (this machine may be slow to deliver it).
    while ((await (await fetch(`${url}/health`)).json()).queued_programs === 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect((await inFlight).rewards[0]).toBe(0);
    expect(await exited).toBe(0);
    expect(output).toMatch(/SIGTERM, finishing the requests in flight/);
    expect(output).toMatch(/stopped after \d+ requests/);
  }, 30_000);
});

describe('reward service limits (in-process, port 0)', () => {
  const tasks = generateTasks({ tiers: ['L4'], split: 'train', count: 4, seed: 3 });
  // Short deadlines keep the queue test quick; the reference test uses the lab's own limits.
  let sandbox: Sandbox;
  let service: RewardService;
  let labSandbox: Sandbox;
  let referenceService: RewardService;
  const options = { tasks, taskSource: 'test tasks', host: '127.0.0.1', port: 0 };

  beforeAll(async () => {
    sandbox = await createSandbox({ size: 1, limits: { deadlineMs: 400 } });
    service = await startRewardService({
      ...options,
      sandbox,
      maxBodyBytes: 4096,
      maxBatch: 4,
      maxQueued: 4,
    });
    labSandbox = await createSandbox({ size: 1 });
    referenceService = await startRewardService({
      ...options,
      sandbox: labSandbox,
      maxBodyBytes: 1 << 20,
      maxBatch: 64,
      maxQueued: 64,
      efficiencyBaseline: 'reference',
    });
  }, 30_000);
  afterAll(async () => {
    await service?.close();
    await referenceService?.close();
    await sandbox?.close();
    await labSandbox?.close();
  });

  it('refuses what is over its limits with 413 and a full queue with 429 + Retry-After', async () => {
    const task = tasks[0]!;
    const loop = { task, completion: 'function solve(a) { while (true) {} }' };
    const five = await post(
      service.url,
      JSON.stringify({ query: Array(5).fill('x'), labels: Array(5).fill(task.id) }),
    );
    expect(five.status).toBe(413);
    expect(five.json.error).toMatch(/batch of 5 queries is over the server's limit of 4/);
    const big = await post(
      service.url,
      JSON.stringify({ query: ['x'.repeat(5000)], labels: [task.id] }),
    );
    expect(big.status).toBe(413);
    expect(big.json.error).toMatch(/over the server's limit of 4096 bytes/);

    const busy = postItems(service.url, [loop, loop, loop, loop]);
    while (service.stats().queued < 4) await new Promise((resolve) => setTimeout(resolve, 5));
    const full = await post(service.url, JSON.stringify({ query: ['x'], labels: [task.id] }));
    expect(full.status).toBe(429);
    expect(Number(full.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(full.json.error).toMatch(/queue is full/);
    expect((await busy).rewards).toEqual([0, 0, 0, 0]);
    const after = await postItems(service.url, [{ task, completion: 'function solve(a) {}' }]);
    expect(after.rewards).toEqual([0]);
  }, 30_000);

  it('--efficiency reference: a lone naive program is paid against the efficient reference', async () => {
    for (const task of tasks) {
      const naive = task.strategies.find((s) => s.name === 'naive')!;
      const efficient = task.strategies.find((s) => s.name === 'efficient')!;
      const answer = await postItems(referenceService.url, [{ task, completion: naive.code }]);
      // The lab's formula with the reference's cost as the baseline (rl/rewards referenceCost).
      const [naiveRun, efficientRun] = await judgePrograms(labSandbox, [
        { task, completion: naive.code },
        { task, completion: efficient.code },
      ]);
      const referenceCost = Math.min(naiveRun!.outcome.cost!, efficientRun!.outcome.cost!);
      const lab = coderRewards([naiveRun!.outcome], DEFAULT_REWARD_WEIGHTS, referenceCost);
      expect(answer.rewards[0]).toBe(lab[0]!.total);
      expect(answer.extra_logs.efficiency![0]).toBeLessThan(1);
    }
  }, 30_000);
});

describe('engine exports', () => {
  const tasks = generateTasks({ tiers: ['L1', 'L4'], split: 'validation', count: 6, seed: 2 });

  it('verl parquet reads back as verl rows; openrlhf and trl JSONL carry the task id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    const [parquet] = writeEngineExport('verl', tasks, 'validation', join(dir, 'verl'));
    const bytes = readFileSync(parquet!);
    const rows = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    });
    expect(rows).toEqual(tasks.map((task, i) => verlRow(task, 'validation', i)));
    expect(rows[0]?.reward_model).toEqual({ style: 'rule', ground_truth: tasks[0]!.id });

    const [openrlhf, labFile] = writeEngineExport('openrlhf', tasks, 'validation', join(dir, 'o'));
    const records = readFileSync(openrlhf!, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(records.map((r) => r.label)).toEqual(tasks.map((t) => t.id));
    expect(records[0].prompt[0].content).toContain(`function named ${tasks[0]!.entryPoint}`);
    expect(parseExportedTasks(readFileSync(labFile!, 'utf8'), labFile!)).toEqual(tasks);

    const [trl] = writeEngineExport('trl', tasks, 'validation', join(dir, 't'));
    const trlRecords = readFileSync(trl!, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(trlRecords.map((r) => r.task_id)).toEqual(tasks.map((t) => t.id));
  });

  it('a bad task file is refused naming the file, the line and the field', () => {
    const lines = toJsonl(tasks).split('\n');
    const broken = JSON.parse(lines[1]!);
    broken.entry_point = 'not an identifier';
    const text = [lines[0], JSON.stringify(broken)].join('\n');
    expect(() => parseExportedTasks(text, 'f.jsonl')).toThrow(
      /f\.jsonl line 2: task ".*", field "entryPoint": "not an identifier" is not a JavaScript identifier/,
    );
    expect(() => parseExportedTasks('{oops', 'f.jsonl')).toThrow(/f\.jsonl line 1: not JSON/);
    expect(() => parseExportedTasks(`${lines[0]}\n${lines[0]}`, 'f.jsonl')).toThrow(
      /already on line 1/,
    );
  });

  it('the completion is the query after its prompt', () => {
    expect(completionOf('PROMPTfunction f(){}', 'PROMPT')).toBe('function f(){}');
    expect(completionOf('<s>PROMPT code', 'PROMPT')).toBe(' code');
    expect(completionOf('no prompt here', 'PROMPT')).toBe('no prompt here');
    expect(completionOf('abc', '')).toBe('abc');
  });
});
