// gpu/engine/packedBatch.ts on its own (plain TypeScript): how a GRPO batch becomes the device
// update's rows — a group's shared prompt once, each completion a segment after it — and how
// the head's values go back to each sequence. The kernels that read these rows are checked in
// kernels.llama.test.ts (segments), deviceLora.test.ts and kernels.trainer.test.ts.
import { describe, expect, it } from 'vitest';
import { headGradient, logProbsOf, packBatch } from '../../src/gpu/engine/packedBatch';

/** Each sequence's log-prob at t stands for itself: 1000·sequence + t. */
const code = (sequence: number, t: number) => 1000 * sequence + t;

/** The head's values a part would read back, from the code of the (sequence, t) at each entry. */
function headValues(parts: ReturnType<typeof packBatch>) {
  return parts.map((part) => {
    const values = new Float32Array(part.scored ? part.scored.length : part.B * part.T);
    for (const run of part.runs)
      for (let k = 0; k < run.count; k++) values[run.first + k] = code(run.sequence, run.from + k);
    return values;
  });
}

describe('packBatch', () => {
  it('without scoredFrom: one row per sequence, every position scored, right-padded', () => {
    const batch = {
      sequences: [
        [5, 6, 7],
        [8, 9],
      ],
    };
    const [part, more] = packBatch(batch);
    expect(more).toBeUndefined();
    expect(part).toMatchObject({ B: 2, T: 3, segments: null, scored: null });
    expect([...part!.ids]).toEqual([5, 6, 7, 8, 9, 0]);
    expect([...part!.positions]).toEqual([0, 1, 2, 0, 1, 0]);
    expect([...part!.targets]).toEqual([6, 7, 0, 9, 0, 0]);
    const logp = logProbsOf(batch, [part!], headValues([part!]));
    expect(logp.map((l) => [...l])).toEqual([[0, 1], [1000]]);
  });

  it('a group that shares a prompt is one row: the prompt once, each completion a segment that sees it', () => {
    // Prompts [1 2 3] (two completions) and [4 5] (one), scored from the prompt's last token.
    const sequences = [
      [1, 2, 3, 10, 11],
      [4, 5, 20],
      [1, 2, 3, 12],
    ];
    const batch = { sequences, scoredFrom: [2, 1, 2] };
    const [part] = packBatch(batch);
    // Row 0: [1 2] once, then [3 10 11] and [3 12]; row 1: [4 5 20] alone (a group of one).
    expect(part).toMatchObject({ B: 2, T: 7 });
    expect([...part!.ids]).toEqual([1, 2, 3, 10, 11, 3, 12, 4, 5, 20, 0, 0, 0, 0]);
    expect([...part!.positions]).toEqual([0, 1, 2, 3, 4, 2, 3, 0, 1, 2, 0, 0, 0, 0]);
    // lo per position (a segment's first place; 0 for the prompt and a plain row; the padding
    // a segment of its own, so starts never decrease along a row), then pre.
    expect([...part!.segments!]).toEqual([0, 0, 2, 2, 2, 5, 5, 0, 0, 0, 3, 3, 3, 3, 2, 0]);
    // Scored: 3→10, 10→11 (segment 1), 3→12 (segment 2), 5→20 (row 1).
    expect([...part!.scored!]).toEqual([2, 3, 5, 8]);
    expect([...part!.scored!].map((r) => part!.targets[r])).toEqual([10, 11, 12, 20]);
    const logp = logProbsOf(batch, [part!], headValues([part!]));
    expect(logp.map((l) => [...l])).toEqual([
      [0, 0, 2, 3],
      [0, 1001],
      [0, 0, 2002],
    ]);
    // dlogp goes to the head's entries the other way.
    const dlogp = sequences.map((s, b) =>
      Array.from({ length: s.length - 1 }, (_, t) => code(b, t)),
    );
    expect([...headGradient(batch, part!, dlogp)]).toEqual([2, 3, 2002, 1001]);
    expect(() => headGradient(batch, part!, [[1], [1], [1]])).toThrow('dlogp of sequence');
  });

  it('micro-batches hold whole rows; a group too long for one splits, and every scored position lands once', () => {
    const prompt = [7, 7, 7, 7, 7, 7];
    const sequences = Array.from({ length: 6 }, (_, i) => [
      ...prompt,
      ...Array.from({ length: 3 + i }, (_, k) => 100 + 10 * i + k),
    ]);
    const batch = { sequences, scoredFrom: sequences.map(() => prompt.length - 1) };
    const whole = packBatch(batch);
    expect(whole.map((p) => p.B)).toEqual([1]);
    const longest = Math.max(...sequences.map((s) => s.length));
    const parts = packBatch(batch, 20);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      // One row a part here (20 positions hold one), no row longer than max(longest, 20).
      expect(part.B * part.T).toBeLessThanOrEqual(Math.max(longest, 20));
      expect(part.segments).not.toBeNull();
    }
    const logp = logProbsOf(batch, parts, headValues(parts));
    logp.forEach((l, b) => {
      for (let t = 0; t < l.length; t++) expect(l[t]).toBe(t >= prompt.length - 1 ? code(b, t) : 0);
    });
  });
});
