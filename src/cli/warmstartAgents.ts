// `npm run --silent warmstart-agents -- --checkpoint public/checkpoints/tiny --steps 150 --seed 1`
// Warm starts of the Debugger and the Retriever from a folder's Planner and Coder (see
// src/agents/warmStartAgents.ts), written beside them: DIR/debugger/, DIR/retriever/ and
// DIR/planner-retrieval/ (the Planner continued on example-first prompts, which
// `npm run train -- grpo --agents retriever,…` uses as the Planner when it is there).
// Options: --out DIR (default: the checkpoint folder) --backend auto|kernels|tfjs-webgpu|wasm|cpu
//          --batch 16 --candidates 4 --learning-rate 1e-3 --agents debugger,retriever,planner-retrieval
//          (which to make; each has its own seed, so one made alone is the same as made with
//          the others). Progress: one JSON line per 20 steps.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_WARM_STARTS, type AgentWarmStart, warmStartAgents } from '../agents/warmStartAgents';
import { BACKEND_CHOICES, type BackendChoice } from '../engine/types';
import { initBackend } from '../gpu/backend';
import { loadCheckpointDir, saveCheckpointDir } from '../model/checkpointNode';
import { createSandbox } from '../sandbox/nodeSandbox';
import type { FlagSpecs } from './flags';
import { commandLine, exitWhenWritten, UsageError } from './runCli';

const FLAGS = {
  checkpoint: {
    kind: 'string',
    help: 'folder with planner/ and coder/ (default public/checkpoints/tiny)',
  },
  out: { kind: 'string', help: 'where the new folders go (default: the checkpoint folder)' },
  steps: { kind: 'integer', help: 'steps per agent (default 150)' },
  seed: { kind: 'integer', help: 'seed (default 1)' },
  batch: { kind: 'integer', help: 'examples per step (default 16)' },
  candidates: { kind: 'integer', help: 'K retrieval candidates (default 4)' },
  'learning-rate': { kind: 'number', alias: 'lr', help: 'peak learning rate (default 1e-3)' },
  agents: {
    kind: 'string',
    help: `comma-separated, of ${AGENT_WARM_STARTS.join(',')} (default all)`,
  },
  backend: { kind: 'choice', choices: BACKEND_CHOICES, help: 'where it trains (default auto)' },
} satisfies FlagSpecs;
const { flags: f } = commandLine('warmstart-agents', FLAGS, {
  usage: 'npm run --silent warmstart-agents -- --checkpoint DIR --steps 150 --seed 1 [flags]',
});
const checkpoint = f.checkpoint ?? 'public/checkpoints/tiny';
const out = f.out ?? checkpoint;
const steps = f.steps ?? 150;
const seed = f.seed ?? 1;
const batchSize = f.batch ?? 16;
const candidates = f.candidates ?? 4;
const peakLr = f['learning-rate'] ?? 1e-3;
for (const [name, value] of Object.entries({ steps, seed, batch: batchSize, candidates })) {
  if (value <= 0) throw new UsageError(`--${name} must be above 0, got ${value}`);
}
if (peakLr <= 0) throw new UsageError(`--learning-rate must be above 0, got ${peakLr}`);
const agents = (f.agents ?? AGENT_WARM_STARTS.join(',')).split(',') as AgentWarmStart[];
const unknown = agents.filter((a) => !AGENT_WARM_STARTS.includes(a));
if (unknown.length > 0) {
  throw new UsageError(`--agents takes ${AGENT_WARM_STARTS.join(', ')}; not ${unknown.join(', ')}`);
}
for (const role of ['planner', 'coder']) {
  if (!existsSync(join(checkpoint, role, 'model.safetensors'))) {
    throw new UsageError(`no ${role}/ checkpoint in ${checkpoint} (--checkpoint)`);
  }
}

const backend = await initBackend((f.backend ?? 'auto') as BackendChoice);
const started = performance.now();
console.log(JSON.stringify({ event: 'start', checkpoint, out, steps, seed, backend }));
const sandbox = await createSandbox();
const models = await warmStartAgents(
  {
    planner: await loadCheckpointDir(join(checkpoint, 'planner')),
    coder: await loadCheckpointDir(join(checkpoint, 'coder')),
  },
  sandbox,
  {
    steps,
    seed,
    batchSize,
    candidates,
    peakLr,
    agents,
    onProgress: (agent, p) =>
      console.log(
        JSON.stringify({
          event: 'progress',
          agent,
          step: p.step,
          loss: Number(p.loss.toPrecision(4)),
          elapsedSec: Math.round(p.elapsedSec),
        }),
      ),
  },
);
const command = `npm run --silent warmstart-agents -- ${process.argv.slice(2).join(' ')}`;
const minutes = (performance.now() - started) / 60_000;
for (const [folder, loaded] of Object.entries(models)) {
  await saveCheckpointDir(join(out, folder), loaded.model, loaded.tokenizer, {
    ...loaded.lab,
    backend: backend.backend,
    command,
    minutes: Number(minutes.toFixed(2)),
  });
}
console.log(JSON.stringify({ event: 'saved', out, minutes: Number(minutes.toFixed(2)) }));
await sandbox.close();
await exitWhenWritten(0);
