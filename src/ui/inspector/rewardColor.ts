/** Cell colour for a reward: red (≤ 0) through amber to green (≥ 1); rewards can exceed 1 with λ·eff. */
export function rewardColor(reward: number): string {
  const t = Math.max(0, Math.min(1, reward));
  const hue = t * 130; // 0 = red, 130 = green
  return `hsl(${hue.toFixed(0)} 55% ${reward <= 0 ? 22 : 30}%)`;
}
