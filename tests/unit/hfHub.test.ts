// Checkpoints from a Hub-layout HTTP server on 127.0.0.1 (HF_ENDPOINT): the fixtures served as
// /{org}/{name}/resolve/{revision}/{file}; a second load comes from the cache; a truncated body
// is fetched again; a missing (404), gated (401) or unreachable model, and a file that never
// arrives whole, are refused in words.
import '@tensorflow/tfjs-core'; // first: its ops must load before register_all_gradients (backend.ts)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHfCommand } from '../../src/cli/modelHf';
import { initBackend } from '../../src/gpu/backend';
import { readHfCheckpoint } from '../../src/model/families/hfCheckpoint';
import { type HubProgress, hubSource, parseHubId } from '../../src/model/hub/hub';
import { nodeHubCache } from '../../src/model/hub/hubCacheNode';
import { fixtureSpec, writeHfCheckpoint } from './hf-fixtures';

let root: string;
let server: Server;
let endpoint: string;
/** Every request the server saw: `path status`. */
const requests: string[] = [];
/** Paths whose next response is cut short (sent once, then served whole). */
const truncateOnce = new Set<string>();
/** Paths always cut short. */
const truncateAlways = new Set<string>();

beforeAll(async () => {
  await initBackend('cpu');
  root = mkdtempSync(join(tmpdir(), 'hf-hub-'));
  writeHfCheckpoint(join(root, 'served', 'lab', 'tiny-qwen3'), fixtureSpec('qwen3'), 5);
  writeHfCheckpoint(join(root, 'served', 'lab', 'tiny-qwen2'), fixtureSpec('qwen2'), 6);
  server = createServer((req, res) => {
    const match = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/([^/]+)$/.exec(req.url ?? '');
    const answer = (status: number, body: Uint8Array | string, length?: number) => {
      requests.push(`${req.url} ${status}`);
      res.writeHead(status, { 'content-length': String(length ?? body.length) });
      res.end(body);
    };
    if (!match) return answer(404, 'not found');
    const [, org, name, revision, file] = match;
    if (org === 'gated') return answer(401, 'gated');
    if (revision !== 'main') return answer(404, 'no such revision');
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(join(root, 'served', org!, name!, file!));
    } catch {
      return answer(404, 'Entry not found');
    }
    const path = req.url!;
    if (truncateAlways.has(path) || truncateOnce.delete(path)) {
      // Announce the whole length, send half, close: the client sees a short body.
      requests.push(`${path} 200-truncated`);
      res.writeHead(200, { 'content-length': String(bytes.length) });
      res.write(bytes.subarray(0, bytes.length >> 1), () => res.destroy());
      return;
    }
    answer(200, bytes);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.HF_ENDPOINT = endpoint;
  process.env.CORE_CODE_LAB_CACHE = join(root, 'cache');
});

afterAll(async () => {
  delete process.env.HF_ENDPOINT;
  delete process.env.CORE_CODE_LAB_CACHE;
  await new Promise((done) => server.close(done));
  rmSync(root, { recursive: true, force: true });
});

const logits = (checkpoint: string) =>
  runHfCommand({
    command: 'logits',
    checkpoint,
    text: 'the fun is in the rest',
    chat: false,
    maxNewTokens: 1,
    temperature: 0,
    topK: 0,
    seed: 1,
  }) as Promise<{ ids: number[]; logits: number[] }>;

describe('checkpoints from a Hub-layout server', () => {
  it('reads org/name[@revision]', () => {
    expect(parseHubId('Qwen/Qwen2.5-Coder-0.5B-Instruct')).toEqual({
      repo: 'Qwen/Qwen2.5-Coder-0.5B-Instruct',
      revision: 'main',
    });
    expect(parseHubId('org/name@v1.0')).toEqual({ repo: 'org/name', revision: 'v1.0' });
    expect(parseHubId('./some/folder/deeper')).toBeNull();
    expect(parseHubId('org/../x')).toBeNull();
  });

  it('loads a sharded checkpoint with progress, the same as from its folder, and a second time from the cache', async () => {
    const progress: HubProgress[] = [];
    const source = hubSource(
      { repo: 'lab/tiny-qwen3', revision: 'main' },
      { endpoint, cache: nodeHubCache(join(root, 'cache-a')), onProgress: (p) => progress.push(p) },
    );
    const checkpoint = await readHfCheckpoint(source);
    expect(checkpoint.config.modelType).toBe('qwen3');
    const shard = progress.filter((p) => p.file === 'model-00001-of-00002.safetensors' && p.done);
    expect(shard).toHaveLength(1);
    expect(shard[0]!.received).toBe(shard[0]!.total);

    requests.length = 0;
    const fromHub = await logits('lab/tiny-qwen3');
    const fetched = requests.length;
    expect(requests.some((r) => r.includes('model-00002-of-00002.safetensors 200'))).toBe(true);
    const fromFolder = await logits(join(root, 'served', 'lab', 'tiny-qwen3'));
    expect(fromHub).toEqual(fromFolder);
    requests.length = 0;
    expect(await logits('lab/tiny-qwen3@main')).toEqual(fromHub);
    // The cache answers every file it holds; only files the checkpoint lacks are asked again.
    expect(requests.every((r) => r.endsWith(' 404'))).toBe(true);
    expect(requests.length).toBeLessThan(fetched);
  });

  it('fetches a truncated file again', async () => {
    truncateOnce.add('/lab/tiny-qwen2/resolve/main/model.safetensors');
    requests.length = 0;
    const cache = nodeHubCache(join(root, 'cache-b'));
    const checkpoint = await readHfCheckpoint(
      hubSource({ repo: 'lab/tiny-qwen2', revision: 'main' }, { endpoint, cache }),
    );
    expect(checkpoint.config.modelType).toBe('qwen2');
    expect(requests.filter((r) => r.includes('model.safetensors '))).toEqual([
      '/lab/tiny-qwen2/resolve/main/model.safetensors 200-truncated',
      '/lab/tiny-qwen2/resolve/main/model.safetensors 200',
    ]);
  });

  it('refuses in words: a missing model, a gated one, an unreachable server, a file that never arrives whole', async () => {
    await expect(logits('lab/no-such-model')).rejects.toThrow(
      /lab\/no-such-model \(revision main\) was not found on http:\/\/127\.0\.0\.1:\d+ \(HTTP 404 for config\.json\)/,
    );
    await expect(logits('gated/model')).rejects.toThrow(
      /gated\/model is gated or private on http:\/\/127\.0\.0\.1:\d+ \(HTTP 401\)/,
    );
    await expect(logits('lab/tiny-qwen2@v9')).rejects.toThrow(/revision v9\) was not found/);
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((done) => closed.close(done));
    await expect(
      readHfCheckpoint(
        hubSource(
          { repo: 'lab/tiny-qwen2', revision: 'main' },
          { endpoint: `http://127.0.0.1:${port}`, cache: nodeHubCache(join(root, 'cache-c')) },
        ),
      ),
    ).rejects.toThrow(/cannot reach http:\/\/127\.0\.0\.1:\d+ for lab\/tiny-qwen2/);
    truncateAlways.add('/lab/tiny-qwen2/resolve/main/model.safetensors');
    await expect(
      readHfCheckpoint(
        hubSource(
          { repo: 'lab/tiny-qwen2', revision: 'main' },
          { endpoint, cache: nodeHubCache(join(root, 'cache-d')) },
        ),
      ),
    ).rejects.toThrow(/lab\/tiny-qwen2@main: model\.safetensors arrived truncated 3 times/);
    truncateAlways.clear();
  });
});
