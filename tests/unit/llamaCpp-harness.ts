// llama.cpp, as @wllama/wllama ships it (compiled to wasm), in headless Chromium: the
// independent engine the GGUF export is checked against. Its wasm needs shared memory, so the
// page is served with the COOP/COEP headers that make it cross-origin isolated; a small HTTP
// server on 127.0.0.1 serves the package's esm/ folder and the GGUF files of one folder.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../src/cli/chromium';

const WLLAMA = resolve(__dirname, '../../node_modules/@wllama/wllama');

export interface LlamaCppToken {
  id: number;
  logprob: number;
  /** The likeliest tokens at this step, best first. */
  top: { id: number; logprob: number }[];
}

export interface LlamaCppRun {
  tokens: LlamaCppToken[];
  promptTokens: number;
  /** The ids llama.cpp ends generation at (eos, and tokens it recognises as end of turn). */
  eog: number[];
  vocab: number;
}

export interface LlamaCpp {
  /** Greedy continuation of `prompt` (tokenized by llama.cpp, specials parsed) with top log-probs. */
  greedy(
    gguf: string,
    prompt: string,
    maxTokens: number,
    topLogprobs: number,
  ): Promise<LlamaCppRun>;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html',
};

function serve(modelDir: string): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Embedder-Policy', 'require-corp');
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/') {
      res.setHeader('content-type', 'text/html');
      res.end(PAGE);
      return;
    }
    const file = path.startsWith('/model/')
      ? join(modelDir, path.slice('/model/'.length))
      : join(WLLAMA, path);
    if (!file.startsWith(modelDir) && !file.startsWith(WLLAMA)) {
      res.statusCode = 403;
      res.end();
      return;
    }
    if (!existsSync(file) || !statSync(file).isFile()) {
      res.statusCode = 404;
      res.end();
      return;
    }
    res.setHeader('content-type', TYPES[extname(file)] ?? 'application/octet-stream');
    createReadStream(file).pipe(res);
  });
  return new Promise((done) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (!address || typeof address === 'string') throw new Error('no port');
      done({ server, base: `http://127.0.0.1:${address.port}` });
    }),
  );
}

/**
 * The page: a module script that defines `greedy` on the window — one Wllama per model, CPU only
 * (n_gpu_layers 0), one thread, f32 KV cache. Plain JavaScript served as is (page.evaluate of
 * a test's function would carry the test runner's import rewriting into the page).
 */
const PAGE = `<!doctype html><title>llama.cpp</title><script type="module">
import { Wllama } from '/esm/index.js';
const quiet = { debug() {}, log() {}, warn() {}, error: console.error };
window.greedy = async ({ file, prompt, maxTokens, topLogprobs, banned }) => {
  const w = new Wllama({ default: '/esm/wasm/wllama.wasm' }, { logger: quiet });
  const blob = await (await fetch('/model/' + file)).blob();
  await w.loadModel([blob], { n_ctx: 256, n_gpu_layers: 0, n_threads: 1,
    cache_type_k: 'f32', cache_type_v: 'f32', flash_attn: false });
  const info = w.getLoadedContextInfo();
  const logit_bias = Object.fromEntries(banned.map((id) => [String(id), -1e4]));
  const r = await w.createCompletion({ prompt, max_tokens: maxTokens, temperature: 0,
    logprobs: topLogprobs, logit_bias });
  await w.exit();
  return {
    tokens: r.choices[0].logprobs.content.map((e) => ({ id: e.id, logprob: e.logprob,
      top: e.top_logprobs.map((t) => ({ id: t.id, logprob: t.logprob })) })),
    promptTokens: r.usage.prompt_tokens,
    eog: info.list_tokens_eog,
    vocab: info.n_vocab,
  };
};
window.ready = true;
</script>`;

export async function startLlamaCpp(modelDir: string): Promise<LlamaCpp> {
  const { server, base } = await serve(modelDir);
  let browser: Browser | null = null;
  try {
    browser = await launchChromium();
    const page: Page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // llama.cpp's own refusals reach the page's console before the wasm call fails.
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text().split('\n')[0]!);
    });
    await page.goto(`${base}/`);
    await page.waitForFunction(() => (globalThis as { ready?: boolean }).ready === true);
    if (!(await page.evaluate(() => globalThis.crossOriginIsolated)))
      throw new Error('the page is not cross-origin isolated: wllama needs shared memory');
    const b = browser;
    return {
      async greedy(file, prompt, maxTokens, topLogprobs, banned = []) {
        errors.length = 0;
        try {
          return await page.evaluate(
            (args) =>
              (globalThis as unknown as { greedy(a: unknown): Promise<LlamaCppRun> }).greedy(args),
            { file, prompt, maxTokens, topLogprobs, banned },
          );
        } catch (err) {
          throw new Error(`llama.cpp on ${file}: ${(err as Error).message} ${errors.join('; ')}`);
        }
      },
      async close() {
        await b.close();
        server.close();
      },
    };
  } catch (err) {
    await browser?.close();
    server.close();
    throw err;
  }
}
