// A hostile hub (issue 34): a real HTTP server on 127.0.0.1 in the Hub's layout whose repos
// misbehave one way each: a redirect loop, a 200 that serves an HTML page, a body longer or
// shorter than its Content-Length, a server that stops mid-file (resumed with a Range request),
// one that trickles bytes. Each is refused in one line naming the file within 10 s, or (the
// stall) loads; nothing a refused load fetched stays in the cache, so a later good download of
// the same id is not poisoned.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHfCheckpoint } from '../../src/model/families/hfCheckpoint';
import { type HubOptions, hubSource } from '../../src/model/hub/hub';
import { nodeHubCache } from '../../src/model/hub/hubCacheNode';
import { HOSTILE_CASES, writeGoodCheckpoint } from './hostile-checkpoints';

let root: string;
let server: Server;
let endpoint: string;
const sockets = new Set<Socket>();
/** Requests as the server saw them: `repo file range`. */
const requests: string[] = [];
/** lab/flip's tokenizer.json: hostile until a test makes it good. */
let flipHostile = true;

/** Sends bytes[from..] with a 206 when asked for a range, else the whole with a 200. */
function rangeStart(range: string | undefined): number {
  return Number(/^bytes=(\d+)-$/.exec(range ?? '')?.[1] ?? 0);
}

function send(res: ServerResponse, bytes: Buffer, from: number) {
  if (from > 0)
    res.writeHead(206, {
      'content-length': bytes.length - from,
      'content-range': `bytes ${from}-${bytes.length - 1}/${bytes.length}`,
    });
  else res.writeHead(200, { 'content-length': bytes.length });
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hostile-hub-'));
  writeGoodCheckpoint(join(root, 'good'));
  writeGoodCheckpoint(join(root, 'bad-tokenizer'));
  HOSTILE_CASES.find((c) => c.name === 'tokenizer.json: ids offset by 10^9')!.spoil(
    join(root, 'bad-tokenizer'),
  );
  server = createServer((req, res) => {
    const match = /^\/lab\/([^/]+)\/resolve\/main\/([^/?]+)$/.exec(req.url ?? '');
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const [, repo, file] = match as unknown as [string, string, string];
    const from = rangeStart(req.headers.range);
    requests.push(`${repo} ${file} ${from}`);
    const folder =
      repo === 'flip' && file === 'tokenizer.json' && flipHostile ? 'bad-tokenizer' : 'good';
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(root, folder, file));
    } catch {
      res.writeHead(404).end();
      return;
    }
    const weights = file === 'model.safetensors';
    if (repo === 'loop' && weights) {
      res.writeHead(302, { location: req.url }).end();
    } else if (repo === 'html' && weights) {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Sign in</body></html>');
    } else if (repo === 'longer' && weights) {
      // Announces less than it sends: the raw socket, since Node's server refuses to.
      const socket = res.socket!;
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${bytes.length - 256}\r\n\r\n`);
      socket.end(bytes);
    } else if (repo === 'shorter' && weights) {
      res.writeHead(200, { 'content-length': bytes.length });
      res.end(bytes.subarray(0, bytes.length - 256));
      res.socket?.destroy();
    } else if (repo === 'stall' && weights) {
      // The first answer stops halfway and holds the connection; a resumed one completes.
      send(res, bytes, from);
      if (from === 0) res.write(bytes.subarray(0, bytes.length >> 1));
      else res.end(bytes.subarray(from));
    } else if (repo === 'trickle' && weights) {
      send(res, bytes, from);
      let at = from;
      const timer = setInterval(() => {
        if (res.destroyed || at >= bytes.length) return clearInterval(timer);
        res.write(bytes.subarray(at, at + 8));
        at += 8;
      }, 50);
      res.on('close', () => clearInterval(timer));
    } else {
      send(res, bytes, from);
      res.end(bytes.subarray(from));
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((done) => server.close(done));
  rmSync(root, { recursive: true, force: true });
});

/** Every file under a cache folder (the absent-file markers aside). */
function cachedFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && !entry.name.endsWith('.absent'))
    .map((entry) => entry.name);
}

/** Stall settings that make the trickle and the stall quick to see (the default window is 30 s). */
const QUICK_STALL: Partial<HubOptions> = { stallSeconds: 0.3, minBytesPerWindow: 1024 };

/** Loads lab/REPO; the checkpoint or the refusal, and the time it took. */
async function load(repo: string, cacheDir: string, options: Partial<HubOptions> = {}) {
  const started = performance.now();
  const source = hubSource(
    { repo: `lab/${repo}`, revision: 'main' },
    {
      endpoint,
      cache: nodeHubCache(cacheDir),
      ...options,
    },
  );
  const result = await readHfCheckpoint(source).then(
    (checkpoint) => ({ checkpoint, error: null }),
    (error: Error) => ({ checkpoint: null, error }),
  );
  return { ...result, ms: performance.now() - started };
}

describe('a hostile hub', () => {
  const cases: [string, RegExp][] = [
    ['loop', /lab\/loop\/resolve\/main\/model\.safetensors redirects in a loop/],
    ['html', /lab\/html@main: model\.safetensors with an HTML page, not the file/],
    ['longer', /lab\/longer@main: model\.safetensors is corrupt: .*(truncated|no tensor)/],
    [
      'shorter',
      /lab\/shorter@main: model\.safetensors arrived truncated 3 times \((got \d+ of the|the connection broke after)/,
    ],
    [
      'trickle',
      /lab\/trickle@main: model\.safetensors arrived truncated 3 times \(it stalled: \d+ bytes in 0\.3 s\)/,
    ],
  ];
  for (const [repo, expected] of cases) {
    it(`${repo}: refused in one line, the file not cached`, async () => {
      const cacheDir = join(root, `cache-${repo}`);
      const { error, ms } = await load(repo, cacheDir, repo === 'trickle' ? QUICK_STALL : {});
      expect(error?.message, error?.message).toMatch(expected);
      expect(error?.message).not.toContain('\n');
      expect(ms).toBeLessThan(10_000);
      // A transfer that failed keeps the files that arrived whole (a retry resumes), never this one.
      expect(cachedFiles(cacheDir)).not.toContain('model.safetensors');
    });
  }

  it('a server that stops mid-file: the download resumes with a Range request and loads', async () => {
    requests.length = 0;
    const { checkpoint, error, ms } = await load('stall', join(root, 'cache-stall'), QUICK_STALL);
    expect(error).toBeNull();
    expect(checkpoint?.config.modelType).toBe('qwen2');
    const asked = requests.filter((r) => r.startsWith('stall model.safetensors '));
    expect(asked, asked.join(' | ')).toHaveLength(2);
    expect(asked[0]).toBe('stall model.safetensors 0');
    expect(Number(asked[1]!.split(' ')[2])).toBeGreaterThan(0);
    expect(ms).toBeLessThan(10_000);
  });

  it('a refused checkpoint is forgotten: the same id served right later loads, fetched afresh', async () => {
    const cacheDir = join(root, 'cache-flip');
    requests.length = 0;
    flipHostile = true;
    const first = await load('flip', cacheDir);
    expect(first.error?.message).toMatch(/tokenizer\.json is refused: token .* has id 100000/);
    expect(cachedFiles(cacheDir)).toEqual([]);
    // Refused before the weights were asked for.
    expect(requests.some((r) => r.startsWith('flip model.safetensors'))).toBe(false);
    flipHostile = false;
    const second = await load('flip', cacheDir);
    expect(second.error).toBeNull();
    expect(requests.filter((r) => r.startsWith('flip config.json'))).toHaveLength(2);
    expect(cachedFiles(cacheDir).length).toBeGreaterThan(0);
  });
});
