// A batch of token sequences laid out as the device's update runs it: rows of a padded [B, T]
// batch. GRPO's sequences come in groups that share a prompt (a task's plans; a plan's
// programs); where they do, one row holds the prompt once and then each completion as a
// segment that sees the prompt and itself (attention.wgsl's SEG), so the prompt's positions are
// run once per group rather than once per sample, forward and backward. A segment starts with
// the prompt's last token (which predicts the completion's first), so no position is scored
// twice. Without scoredFrom every sequence is its own row and every position is scored.

/** Sequences of token ids; log-probs are of each next token, logp[t] = log p(ids[t+1] | ids[≤t]). */
export interface TokenBatch {
  sequences: readonly (readonly number[])[];
  /** Softmax temperature of the log-probs (default 1). */
  temperature?: number;
  /**
   * Per sequence, the first position whose log-prob is wanted (GRPO's: the prompt's last, which
   * predicts the first completion token). The head runs on those positions only, as GPT-2's
   * trainer does (rows.wgsl); the others' log-probs read 0 and take no gradient. Sequences that
   * agree before it share a row (above). Default: every position, one row per sequence.
   */
  scoredFrom?: readonly number[];
}

/** Where sequence `sequence`'s log-probs from `from` on lie among a part's scored positions. */
export interface ScoredRun {
  sequence: number;
  from: number;
  first: number;
  count: number;
}

export interface PackedPart {
  B: number;
  T: number;
  ids: Uint32Array;
  /** The next token of each position (0 where none). */
  targets: Uint32Array;
  /** Each position's place in its sequence (RoPE's angle). */
  positions: Uint32Array;
  /** [lo per position | pre per row] for attention.wgsl; null: plain causal rows. */
  segments: Uint32Array | null;
  /** The positions whose log-probs are wanted, in order; null: every position. */
  scored: Uint32Array | null;
  runs: ScoredRun[];
}

interface Row {
  tokens: number[];
  positions: number[];
  lo: number[];
  pre: number;
  /** Per segment: its sequence, first scored position in the row, the sequence's t there, count. */
  spans: { sequence: number; at: number; from: number; count: number }[];
}

const same = (a: readonly number[], b: readonly number[], n: number) => {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

/** One row per sequence (no sharing). */
function plainRow(seq: readonly number[], sequence: number, from: number): Row {
  return {
    tokens: [...seq],
    positions: seq.map((_, t) => t),
    lo: seq.map(() => 0),
    pre: 0,
    spans: [{ sequence, at: from, from, count: Math.max(0, seq.length - 1 - from) }],
  };
}

/** Sequences `members` (sharing their first `p` tokens) as one row: the prefix once, then segments. */
function sharedRow(batch: TokenBatch, members: number[], p: number): Row {
  const first = batch.sequences[members[0] as number] as readonly number[];
  const row: Row = {
    tokens: first.slice(0, p),
    positions: first.slice(0, p).map((_, t) => t),
    lo: first.slice(0, p).map(() => 0),
    pre: p,
    spans: [],
  };
  for (const sequence of members) {
    const seq = batch.sequences[sequence] as readonly number[];
    const start = row.tokens.length;
    for (let t = p; t < seq.length; t++) {
      row.tokens.push(seq[t] as number);
      row.positions.push(t);
      row.lo.push(start);
    }
    row.spans.push({ sequence, at: start, from: p, count: seq.length - 1 - p });
  }
  return row;
}

/**
 * The rows of `batch`: with scoredFrom, sequences whose tokens before their scoredFrom agree
 * (and whose scoredFrom agree) share one row, a row at most `maxRowLength` long where that
 * splits a group (each sequence still fits: it is never longer packed than alone).
 */
function rowsOf(batch: TokenBatch, maxRowLength: number): Row[] {
  const from = batch.scoredFrom;
  if (!from) return batch.sequences.map((seq, b) => plainRow(seq, b, 0));
  const rows: Row[] = [];
  const grouped = new Set<number>();
  batch.sequences.forEach((seq, b) => {
    if (grouped.has(b)) return;
    const p = Math.max(0, from[b] ?? 0);
    const members = [b];
    batch.sequences.forEach((other, o) => {
      if (
        o > b &&
        !grouped.has(o) &&
        (from[o] ?? 0) === p &&
        other.length > p &&
        same(seq, other, p)
      )
        members.push(o);
    });
    for (const m of members) grouped.add(m);
    if (p === 0 || members.length === 1 || seq.length <= p) {
      for (const m of members)
        rows.push(plainRow(batch.sequences[m] ?? [], m, Math.max(0, from[m] ?? 0)));
      return;
    }
    // Split the group where its row would pass maxRowLength.
    let part: number[] = [];
    let length = p;
    for (const m of members) {
      const add = (batch.sequences[m]?.length ?? 0) - p;
      if (part.length > 0 && length + add > maxRowLength) {
        rows.push(sharedRow(batch, part, p));
        part = [];
        length = p;
      }
      part.push(m);
      length += add;
    }
    rows.push(sharedRow(batch, part, p));
  });
  return rows;
}

function partOf(rows: Row[], T: number, everyPosition: boolean): PackedPart {
  const B = rows.length;
  const R = B * T;
  const ids = new Uint32Array(R);
  const targets = new Uint32Array(R);
  const positions = new Uint32Array(R);
  const shared = rows.some((row) => row.pre > 0);
  const segments = shared ? new Uint32Array(R + B) : null;
  const scored: number[] = [];
  const runs: ScoredRun[] = [];
  rows.forEach((row, b) => {
    row.tokens.forEach((id, t) => {
      ids[b * T + t] = id;
      positions[b * T + t] = row.positions[t] as number;
      if (segments) segments[b * T + t] = row.lo[t] as number;
    });
    if (segments) {
      segments[R + b] = row.pre;
      // The padding is a segment of its own (it sees the prompt and itself): segment starts
      // never decrease along a row, which attention.wgsl's dkdv relies on to stop early.
      segments.fill(row.tokens.length, b * T + row.tokens.length, (b + 1) * T);
    }
    for (const span of row.spans) {
      runs.push({
        sequence: span.sequence,
        from: span.from,
        first: everyPosition ? b * T + span.at : scored.length,
        count: span.count,
      });
      for (let k = 0; k < span.count; k++) {
        const at = b * T + span.at + k;
        targets[at] = row.tokens[span.at + k + 1] as number;
        scored.push(at);
      }
    }
  });
  return {
    B,
    T,
    ids,
    targets,
    positions,
    segments,
    scored: everyPosition ? null : Uint32Array.from(scored),
    runs,
  };
}

/**
 * `batch` as the update's parts: rows (shared prompts packed), each part at most `maxRows`
 * positions (B·T, at least one row), every part as wide as the longest row.
 */
export function packBatch(batch: TokenBatch, maxRows = Number.POSITIVE_INFINITY): PackedPart[] {
  if (batch.sequences.length === 0) throw new Error('an empty batch');
  const longest = Math.max(...batch.sequences.map((s) => s.length));
  const rows = rowsOf(batch, Math.max(longest, maxRows));
  const T = Math.max(...rows.map((r) => r.tokens.length));
  const perPart = Math.max(1, Math.floor(maxRows / T));
  const everyPosition = !batch.scoredFrom;
  const parts: PackedPart[] = [];
  for (let first = 0; first < rows.length; first += perPart)
    parts.push(partOf(rows.slice(first, first + perPart), T, everyPosition));
  return parts;
}

/** Per sequence, its log-probs [len − 1] out of each part's head values (0 where unscored). */
export function logProbsOf(
  batch: TokenBatch,
  parts: readonly PackedPart[],
  values: readonly Float32Array[],
): Float32Array[] {
  const out = batch.sequences.map((s) => new Float32Array(Math.max(0, s.length - 1)));
  parts.forEach((part, i) => {
    const v = values[i] as Float32Array;
    for (const run of part.runs) {
      const o = out[run.sequence] as Float32Array;
      for (let k = 0; k < run.count; k++) o[run.from + k] = v[run.first + k] as number;
    }
  });
  return out;
}

/** A part's head values of dlogp (sequence-indexed, [len − 1] each), in its scored order. */
export function headGradient(
  batch: TokenBatch,
  part: PackedPart,
  dlogp: readonly ArrayLike<number>[] | undefined,
): Float32Array {
  const g = new Float32Array(part.scored ? part.scored.length : part.B * part.T);
  if (!dlogp) return g;
  for (const run of part.runs) {
    const seq = batch.sequences[run.sequence] as readonly number[];
    const d = dlogp[run.sequence];
    if ((d?.length ?? -1) !== seq.length - 1)
      throw new Error(`dlogp of sequence ${run.sequence} must hold ${seq.length - 1} values`);
    for (let k = 0; k < run.count; k++)
      g[run.first + k] = (d as ArrayLike<number>)[run.from + k] ?? 0;
  }
  return g;
}
