// One file from a hub, downloaded as untrusted input: the body's length against Content-Length
// (shorter or longer), a size limit set by the caller before a byte is kept, an HTML page served
// with 200 in place of the file refused, a server that stops or trickles (fewer than
// `minBytesPerWindow` bytes in `stallSeconds`) given up on and resumed with a Range request, a
// redirect loop named. Returns the bytes, or null for a 404.
import { TransferError } from '../families/hfCheckpoint';

export interface DownloadOptions {
  headers: Record<string, string>;
  /** Tries when the body breaks off, stalls or arrives short; later tries resume where it stopped. */
  attempts: number;
  /** The window over which a download must make progress. */
  stallSeconds: number;
  /** The fewest bytes a window must bring while the file is incomplete. */
  minBytesPerWindow: number;
  /** The most bytes the file may have. */
  maxBytes: number;
  onProgress?: (
    received: number,
    total: number | null,
    etaSeconds: number | null,
    done: boolean,
  ) => void;
  onFetch?: (url: string, status: number) => void;
}

/** A failure worth another try: a broken connection, a short body, a stall. */
class Retry extends Error {
  constructor(
    message: string,
    /** The server was never reached (refused, no route, DNS). */
    readonly unreachable = false,
  ) {
    super(message);
  }
}

const MB = 1024 * 1024;

/** Downloads `url`; every refusal says `what` (the repo's file) and why. */
export async function download(
  url: string,
  what: string,
  o: DownloadOptions,
): Promise<Uint8Array | null> {
  const state: Received = { chunks: [], received: 0, total: null };
  let why: Retry | null = null;
  for (let attempt = 0; attempt < o.attempts; attempt++) {
    try {
      const found = await fetchInto(url, what, o, state);
      if (!found) return null;
      return concat(state.chunks, state.received);
    } catch (err) {
      if (!(err instanceof Retry)) throw err;
      why = err;
    }
  }
  if (why?.unreachable) throw new TransferError(`unreachable: ${why.message}`);
  throw new TransferError(`${what} arrived truncated ${o.attempts} times (${why?.message})`);
}

/** What earlier tries received, so a later one asks only for the rest. */
interface Received {
  chunks: Uint8Array[];
  received: number;
  total: number | null;
}

async function fetchInto(
  url: string,
  what: string,
  o: DownloadOptions,
  state: Received,
): Promise<boolean> {
  const abort = new AbortController();
  let mark = state.received;
  let stalled = '';
  const window = o.stallSeconds * 1000;
  const watch = setInterval(() => {
    const got = state.received - mark;
    mark = state.received;
    if (got < o.minBytesPerWindow) {
      stalled = `${got} bytes in ${o.stallSeconds} s`;
      abort.abort();
    }
  }, window);
  const resume = state.received > 0;
  try {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: resume ? { ...o.headers, range: `bytes=${state.received}-` } : o.headers,
        signal: abort.signal,
      });
    } catch (err) {
      if (stalled) throw new Retry(`the server did not answer: ${stalled}`);
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? '';
      if (/redirect/i.test(cause)) throw new TransferError(`${url} redirects in a loop (${cause})`);
      throw new Retry(`${(err as Error).message}${cause ? `: ${cause}` : ''}`, true);
    }
    o.onFetch?.(url, res.status);
    if (res.status === 404) {
      await res.body?.cancel();
      return false;
    }
    if (res.status === 401 || res.status === 403) {
      await res.body?.cancel();
      throw new TransferError(`HTTP ${res.status}: gated or private`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new TransferError(`the server answered HTTP ${res.status} for ${what}`);
    }
    if (/^text\/html/i.test(res.headers.get('content-type') ?? '')) {
      await res.body?.cancel();
      throw new TransferError(
        `the server answered ${what} with an HTML page, not the file (a login or error page?)`,
      );
    }
    if (res.status === 206) {
      // Content-Range: bytes START-END/TOTAL; anything but our start means start over.
      const range = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(res.headers.get('content-range') ?? '');
      if (!range || Number(range[1]) !== state.received) {
        await res.body?.cancel();
        Object.assign(state, { chunks: [], received: 0, total: null });
        throw new Retry('the server resumed at the wrong place');
      }
      if (range[2] !== '*') state.total = Number(range[2]);
    } else {
      Object.assign(state, { chunks: [], received: 0 });
      mark = 0;
      const length = res.headers.get('content-length');
      state.total = length !== null && !res.headers.get('content-encoding') ? Number(length) : null;
    }
    if (state.total !== null && state.total > o.maxBytes) {
      await res.body?.cancel();
      throw new Error(
        `${what} is ${(state.total / MB).toFixed(1)} MB, over the ${(o.maxBytes / MB).toFixed(1)} MB its checkpoint can need`,
      );
    }
    try {
      await readBody(res, what, o, state);
    } catch (err) {
      if (stalled) throw new Retry(`it stalled: ${stalled}`);
      throw err;
    }
  } finally {
    clearInterval(watch);
  }
  if (stalled) throw new Retry(`it stalled: ${stalled}`);
  if (state.total !== null && state.received < state.total)
    throw new Retry(`got ${state.received} of the ${state.total} bytes Content-Length announced`);
  return true;
}

async function readBody(res: Response, what: string, o: DownloadOptions, state: Received) {
  const started = Date.now();
  const from = state.received;
  let lastReport = 0;
  const report = (done: boolean) => {
    const seconds = (Date.now() - started) / 1000;
    const rate = seconds > 0 ? (state.received - from) / seconds : 0;
    const eta =
      state.total !== null && rate > 0 ? Math.max(0, (state.total - state.received) / rate) : null;
    o.onProgress?.(state.received, state.total, eta, done);
  };
  const reader = res.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      state.chunks.push(value);
      state.received += value.length;
      const limit = Math.min(state.total ?? Number.POSITIVE_INFINITY, o.maxBytes);
      if (state.received > limit) {
        await reader.cancel();
        const message =
          state.total === null
            ? `${what} runs past ${(o.maxBytes / MB).toFixed(1)} MB, more than its checkpoint can need`
            : `${what}'s body runs past its Content-Length (${state.total} bytes)`;
        // Longer than announced: what arrived is not the file the server described.
        Object.assign(state, { chunks: [], received: 0, total: null });
        throw new TransferError(message);
      }
      if (Date.now() - lastReport > 500) {
        lastReport = Date.now();
        report(false);
      }
    }
  } catch (err) {
    if (err instanceof TransferError) throw err;
    throw new Retry(`the connection broke after ${state.received} bytes`);
  }
  report(true);
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.length;
  }
  return bytes;
}
