// `npm run --silent warmstart-agents -- --checkpoint public/checkpoints/tiny --steps 150 --seed 1`
// Warm starts of the Debugger and the Retriever from a folder's Planner and Coder (see
// src/agents/warmStartAgents.ts), written beside them: DIR/debugger/, DIR/retriever/ and
// DIR/planner-retrieval/ (the Planner continued on example-first prompts, which
// `npm run train -- grpo --agents retriever,…` uses as the Planner when it is there).
// Options: --out DIR (default: the checkpoint folder) --backend auto|kernels|tfjs-webgpu|wasm|cpu
//          --batch 16 --candidates 4 --lr 1e-3 --agents debugger,retriever,planner-retrieval
//          (which to make; each has its own seed, so one made alone is the same as made with
//          the others). Progress: one JSON line per 20 steps.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_WARM_STARTS, type AgentWarmStart, warmStartAgents } from '../agents/warmStartAgents';
import { type BackendChoice, initBackend } from '../gpu/backend';
import { loadCheckpointDir, saveCheckpointDir } from '../model/checkpointNode';
import { createSandbox } from '../sandbox/nodeSandbox';
import { parseFlags } from './flags';

const f = parseFlags(process.argv.slice(2));
const checkpoint = f.get('checkpoint') ?? 'public/checkpoints/tiny';
const out = f.get('out') ?? checkpoint;
const steps = Number(f.get('steps') ?? 150);
const seed = Number(f.get('seed') ?? 1);
const batchSize = Number(f.get('batch') ?? 16);
const candidates = Number(f.get('candidates') ?? 4);
const peakLr = Number(f.get('lr') ?? 1e-3);
for (const [name, value] of Object.entries({ steps, seed, batchSize, candidates, peakLr })) {
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`warmstart-agents: --${name} must be a number > 0, got ${value}`);
    process.exit(2);
  }
}
const agents = (f.get('agents') ?? AGENT_WARM_STARTS.join(',')).split(',') as AgentWarmStart[];
const unknown = agents.filter((a) => !AGENT_WARM_STARTS.includes(a));
if (unknown.length > 0) {
  console.error(
    `warmstart-agents: --agents takes ${AGENT_WARM_STARTS.join(', ')}; not ${unknown.join(', ')}`,
  );
  process.exit(2);
}
for (const role of ['planner', 'coder']) {
  if (!existsSync(join(checkpoint, role, 'model.safetensors'))) {
    console.error(`warmstart-agents: no ${role}/ checkpoint in ${checkpoint}`);
    process.exit(2);
  }
}

const backend = await initBackend((f.get('backend') ?? 'auto') as BackendChoice);
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
process.exit(0);
