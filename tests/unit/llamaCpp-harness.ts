// llama.cpp, as @wllama/wllama ships it (compiled to wasm), in headless Chromium: the
// independent engine the GGUF export is checked against. Its wasm needs shared memory, so the
// page is served with the COOP/COEP headers that make it cross-origin isolated; a small HTTP
// server on 127.0.0.1 serves the package's esm/ folder and the GGUF files of one folder.
import { createReadStream, existsSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { basename, extname, join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../src/cli/chromium';
import { folderSource } from '../../src/model/families/folderSourceNode';
import { readHfCheckpoint } from '../../src/model/families/hfCheckpoint';
import { checkpointGguf } from '../../src/model/gguf/checkpointGguf';
import { ggufParts } from '../../src/model/gguf/ggufFile';
import type { GgufDtype } from '../../src/model/gguf/ggufTensors';
import { readLoraAdapter } from '../../src/model/peft';

const WLLAMA = resolve(__dirname, '../../node_modules/@wllama/wllama');

export interface LlamaCppToken {
  id: number;
  logprob: number;
  /** The likeliest tokens at this step, best first. */
  top: { id: number; logprob: number }[];
}

/** llama.cpp's own timings of the request (its server's `timings`). */
export interface LlamaCppTimings {
  prompt_n: number;
  prompt_per_second: number;
  predicted_n: number;
  predicted_per_second: number;
}

/** wllama's LoadModelParams the runs may change (the defaults: CPU, one thread, n_ctx 256). */
export interface LlamaCppLoad {
  n_gpu_layers?: number;
  n_threads?: number;
  n_ctx?: number;
}

export interface LlamaCppRun {
  tokens: LlamaCppToken[];
  timings: LlamaCppTimings;
  /** llama.cpp's lines naming the buffers it put the model on ("CPU model buffer size = …"). */
  buffers: string[];
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
    load?: LlamaCppLoad,
  ): Promise<LlamaCppRun>;
  /** The page's WebGPU adapter: its description and whether it offers shader-f16. */
  webgpu(): Promise<{ adapter: string; shaderF16: boolean } | null>;
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
let buffers = [];
const keep = (line) => { if (/buffer size/.test(String(line))) buffers.push(String(line)); };
const logger = { debug: keep, log: keep, warn: keep, error: console.error };
window.greedy = async ({ file, prompt, maxTokens, topLogprobs, load }) => {
  buffers = [];
  const w = new Wllama({ default: '/esm/wasm/wllama.wasm' }, { logger });
  const blob = await (await fetch('/model/' + file)).blob();
  await w.loadModel([blob], { n_ctx: 256, n_gpu_layers: 0, n_threads: 1,
    cache_type_k: 'f32', cache_type_v: 'f32', flash_attn: false, ...load });
  const info = w.getLoadedContextInfo();
  const r = await w.createCompletion({ prompt, max_tokens: maxTokens, temperature: 0,
    logprobs: topLogprobs });
  await w.exit();
  const content = r.choices[0].logprobs ? r.choices[0].logprobs.content : [];
  return {
    tokens: content.map((e) => ({ id: e.id, logprob: e.logprob,
      top: e.top_logprobs.map((t) => ({ id: t.id, logprob: t.logprob })) })),
    timings: r.timings,
    buffers,
    promptTokens: r.usage.prompt_tokens,
    eog: info.list_tokens_eog,
    vocab: info.n_vocab,
  };
};
window.webgpu = async () => {
  const adapter = navigator.gpu && (await navigator.gpu.requestAdapter());
  if (!adapter) return null;
  const i = adapter.info || {};
  return { adapter: [i.vendor, i.architecture, i.description].filter(Boolean).join(' ') || 'unnamed',
    shaderF16: adapter.features.has('shader-f16') };
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
      async greedy(file, prompt, maxTokens, topLogprobs, load = {}) {
        errors.length = 0;
        try {
          return await page.evaluate(
            (args) =>
              (globalThis as unknown as { greedy(a: unknown): Promise<LlamaCppRun> }).greedy(args),
            { file, prompt, maxTokens, topLogprobs, load },
          );
        } catch (err) {
          throw new Error(`llama.cpp on ${file}: ${(err as Error).message} ${errors.join('; ')}`);
        }
      },
      webgpu() {
        return page.evaluate(() =>
          (
            globalThis as unknown as {
              webgpu(): Promise<{ adapter: string; shaderF16: boolean } | null>;
            }
          ).webgpu(),
        );
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

/**
 * A Llama-family checkpoint (and adapter) as the export writes it, except the texts of the byte
 * tokens 0x80–0xFF of a byte-level vocabulary: a random model strings those into text that is not
 * UTF-8, and wllama's JSON answer (its glue's strict json dump) cannot carry it, so they are
 * spelled `<0xNN>` here. Ids and weights are the export's; only how llama.cpp renders those 128
 * tokens as text changes.
 */
export async function writeRenderableLlamaGguf(
  checkpoint: string,
  adapter: string | null,
  out: string,
  dtype: GgufDtype,
): Promise<void> {
  const hf = await readHfCheckpoint(folderSource(checkpoint));
  const lora = adapter ? await readLoraAdapter(folderSource(adapter)) : null;
  const gguf = checkpointGguf({ checkpoint: hf, adapter: lora, dtype, name: basename(checkpoint) });
  const tokens = gguf.metadata.find(([key]) => key === 'tokenizer.ggml.tokens')?.[1];
  if (tokens?.type !== 'array-string') throw new Error('no token list');
  const texts = [...tokens.value];
  for (let b = 128; b < 256; b++) texts[b] = `<0x${b.toString(16).toUpperCase()}>`;
  tokens.value = texts;
  writeFileSync(out, Buffer.concat(ggufParts(gguf)));
}
