// The config fields that differ between runs, so the runs table shows only those columns.
// Configs are flattened to dotted paths ('grpo.epsilonLow', 'tierMix.L4'); a field missing
// in one run and present in another counts as different.

export type FlatConfig = Record<string, string | number | boolean | null>;

/** Nested plain data → { 'a.b.c': leaf }. Arrays are kept whole (as JSON). */
export function flattenConfig(value: unknown, prefix = ''): FlatConfig {
  const out: FlatConfig = {};
  const visit = (node: unknown, path: string) => {
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
      for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
        visit(child, path ? `${path}.${key}` : key);
      }
      return;
    }
    if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') {
      out[path] = node;
    } else if (node === null || node === undefined) {
      out[path] = null;
    } else {
      out[path] = JSON.stringify(node);
    }
  };
  visit(value, prefix);
  return out;
}

export interface ConfigDiff {
  /** Dotted paths whose values are not the same in every run, in first-seen order. */
  fields: string[];
  /** One flattened config per input config, in the same order. */
  values: FlatConfig[];
}

/** Fields that differ among `configs` (none when there are fewer than two). */
export function configDiff(configs: readonly unknown[]): ConfigDiff {
  const values = configs.map((config) => flattenConfig(config));
  if (values.length < 2) return { fields: [], values };
  const paths: string[] = [];
  const seen = new Set<string>();
  for (const flat of values) {
    for (const path of Object.keys(flat)) {
      if (!seen.has(path)) {
        seen.add(path);
        paths.push(path);
      }
    }
  }
  const differs = (path: string) => {
    const first = path in (values[0] as FlatConfig) ? (values[0] as FlatConfig)[path] : undefined;
    return values.some((flat) => (path in flat ? flat[path] : undefined) !== first);
  };
  return { fields: paths.filter(differs), values };
}

/** 'grpo.rewardWeights.efficiency' → 'efficiency'; 'tierMix.L4' → 'tierMix.L4'. */
export function fieldLabel(path: string): string {
  const parts = path.split('.');
  if (parts[0] === 'grpo') parts.shift();
  if (parts[0] === 'rewardWeights') return `w.${parts.slice(1).join('.')}`;
  return parts.join('.');
}
