// Canvas colours (uPlot draws on a canvas, so CSS variables cannot be used there).

const RUN_COLORS = [
  '#60a5fa',
  '#34d399',
  '#f59e0b',
  '#f472b6',
  '#a78bfa',
  '#22d3ee',
  '#f87171',
  '#a3e635',
];

/** A run keeps its colour (by its index in store.runs) when others are hidden. */
export function runColor(runIndex: number): string {
  return RUN_COLORS[runIndex % RUN_COLORS.length] as string;
}

/** Colours for the lines of one chart (roles, tiers, timing parts) when one run is shown. */
export const LINE_COLORS = ['#60a5fa', '#f59e0b', '#34d399', '#f472b6', '#a78bfa'];

/** Dash patterns that tell a chart's lines apart when several runs are overlaid. */
export const LINE_DASHES: (number[] | undefined)[] = [undefined, [6, 3], [2, 3], [10, 3, 2, 3]];
