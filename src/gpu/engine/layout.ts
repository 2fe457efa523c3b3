// The model's weights as one flat f32 buffer: every parameter of src/model/params.ts at an
// offset aligned to 256 bytes (so any of them can also be bound as a range), gradients and
// Adam's moments in buffers of the same layout.
import type { ModelConfig } from '../../model/config';
import { parameterSpecs } from '../../model/params';
import { ALIGN_FLOATS } from './runtime';

export interface ParamEntry {
  name: string;
  shape: number[];
  offset: number;
  size: number;
  /** AdamW decays matrices only (rank ≥ 2), as src/model/adamw.ts. */
  decay: boolean;
}

export interface ParamLayout {
  entries: ParamEntry[];
  byName: Map<string, ParamEntry>;
  /** Floats in the flat buffer, padding included. */
  total: number;
}

export function paramLayout(config: ModelConfig): ParamLayout {
  const entries: ParamEntry[] = [];
  let offset = 0;
  for (const spec of parameterSpecs(config)) {
    const size = spec.shape.reduce((a, b) => a * b, 1);
    entries.push({
      name: spec.name,
      shape: spec.shape,
      offset,
      size,
      decay: spec.shape.length >= 2,
    });
    offset += Math.ceil(size / ALIGN_FLOATS) * ALIGN_FLOATS;
  }
  return { entries, byName: new Map(entries.map((e) => [e.name, e])), total: offset };
}

export function entry(layout: ParamLayout, name: string): ParamEntry {
  const e = layout.byName.get(name);
  if (!e) throw new Error(`no parameter ${name}`);
  return e;
}

/** Packs named values into the flat layout. */
export function packParams(layout: ParamLayout, values: Map<string, Float32Array>): Float32Array {
  const flat = new Float32Array(layout.total);
  for (const e of layout.entries) {
    const v = values.get(e.name);
    if (!v || v.length !== e.size) throw new Error(`parameter ${e.name}: missing or wrong size`);
    flat.set(v, e.offset);
  }
  return flat;
}

export function unpackParams(layout: ParamLayout, flat: Float32Array): Map<string, Float32Array> {
  const out = new Map<string, Float32Array>();
  for (const e of layout.entries) out.set(e.name, flat.slice(e.offset, e.offset + e.size));
  return out;
}

/** 1 where AdamW decays the element (matrices), 0 elsewhere (biases, gains, padding). */
export function decayMask(layout: ParamLayout): Float32Array {
  const mask = new Float32Array(layout.total);
  for (const e of layout.entries) if (e.decay) mask.fill(1, e.offset, e.offset + e.size);
  return mask;
}
