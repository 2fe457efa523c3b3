// Exponential moving average as TensorBoard draws it: the running average starts at 0 and
// is divided by (1 − w^k) ("debiased"), so the first points are not pulled towards 0.
// Missing values (null, NaN, ±Infinity) stay missing and do not advance the average.

export type SeriesValues = readonly (number | null | undefined)[];

/** EMA with TensorBoard's debias; `weight` in [0, 1): 0 returns the values unchanged. */
export function smoothEma(values: SeriesValues, weight: number): (number | null)[] {
  const w = Math.min(Math.max(weight, 0), 0.999);
  const out = new Array<number | null>(values.length);
  let last = 0;
  let count = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined || !Number.isFinite(value)) {
      out[i] = null;
      continue;
    }
    if (w === 0) {
      out[i] = value;
      continue;
    }
    last = last * w + (1 - w) * value;
    count++;
    out[i] = last / (1 - w ** count);
  }
  return out;
}

/** Log axes cannot show values ≤ 0: those become gaps. */
export function positiveOnly(values: SeriesValues): (number | null)[] {
  return values.map((value) =>
    value === null || value === undefined || !(value > 0) || !Number.isFinite(value) ? null : value,
  );
}
