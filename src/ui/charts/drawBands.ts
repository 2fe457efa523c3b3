// Mean ± std bands as one filled polygon per contiguous run of points (upper edge forward,
// lower edge back), drawn under the lines. Edges are averaged over a few pixels: a band is
// a soft cue, and a polygon with thousands of jagged vertices costs most of a frame to fill
// in software rendering (uPlot's own bands, which clip between two series, cost more still).
import type uPlot from 'uplot';
import type { PreparedChart } from './chartData';

/** Width in canvas pixels over which band edges are averaged. */
const BAND_BUCKET_PX = 4;

/** The band's edges in canvas pixels, one vertex per bucket, split at gaps. */
export function bandOutline(
  xs: ArrayLike<number>,
  upper: ArrayLike<number | null | undefined>,
  lower: ArrayLike<number | null | undefined>,
  toX: (value: number) => number,
  toY: (value: number) => number,
  bucketPx = BAND_BUCKET_PX,
): { x: number[]; hi: number[]; lo: number[] }[] {
  const runs: { x: number[]; hi: number[]; lo: number[] }[] = [];
  let run: { x: number[]; hi: number[]; lo: number[] } | null = null;
  let bucketStart = Number.NaN;
  let sumX = 0;
  let sumHi = 0;
  let sumLo = 0;
  let count = 0;
  const flush = () => {
    if (run && count > 0) {
      run.x.push(sumX / count);
      run.hi.push(sumHi / count);
      run.lo.push(sumLo / count);
    }
    sumX = sumHi = sumLo = count = 0;
  };
  for (let i = 0; i < xs.length; i++) {
    const hi = upper[i];
    const lo = lower[i];
    if (hi === null || hi === undefined || lo === null || lo === undefined) {
      flush();
      run = null;
      continue;
    }
    const px = toX(xs[i] as number);
    if (!run) {
      run = { x: [], hi: [], lo: [] };
      runs.push(run);
      bucketStart = px;
    } else if (px - bucketStart >= bucketPx) {
      flush();
      bucketStart = px;
    }
    sumX += px;
    sumHi += toY(hi);
    sumLo += toY(lo);
    count++;
  }
  flush();
  return runs;
}

export function drawBands(u: uPlot, prepared: PreparedChart): void {
  if (prepared.bands.length === 0) return;
  const { ctx, bbox } = u;
  const xs = prepared.data[0];
  const toX = (value: number) => u.valToPos(value, 'x', true);
  const toY = (value: number) => u.valToPos(value, 'y', true);
  ctx.save();
  ctx.beginPath();
  ctx.rect(bbox.left, bbox.top, bbox.width, bbox.height);
  ctx.clip();
  for (const [upperIndex, lowerIndex] of prepared.bands) {
    const upper = prepared.data[upperIndex];
    const lower = prepared.data[lowerIndex];
    const column = prepared.columns[upperIndex - 1];
    if (!upper || !lower || !column) continue;
    ctx.fillStyle = `${column.color}33`;
    ctx.beginPath();
    for (const run of bandOutline(xs, upper, lower, toX, toY)) {
      ctx.moveTo(run.x[0] as number, run.hi[0] as number);
      for (let k = 1; k < run.x.length; k++) ctx.lineTo(run.x[k] as number, run.hi[k] as number);
      for (let k = run.x.length - 1; k >= 0; k--) {
        ctx.lineTo(run.x[k] as number, run.lo[k] as number);
      }
      ctx.closePath();
    }
    ctx.fill();
  }
  ctx.restore();
}
