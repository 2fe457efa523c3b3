// One benchmark section = one table. `npm run bench` runs every section and prints them.

export interface BenchTable {
  title: string;
  /** What ran: backend, adapter, preset, sizes. Printed under the title. */
  environment: string;
  columns: string[];
  rows: (string | number)[][];
  notes?: string[];
}

export type BenchSection = () => Promise<BenchTable>;

export function formatTable(table: BenchTable): string {
  const cells = [table.columns, ...table.rows.map((row) => row.map(formatCell))];
  const widths = table.columns.map((_, c) =>
    Math.max(...cells.map((row) => String(row[c] ?? '').length)),
  );
  const line = (row: (string | number)[]) =>
    `| ${row.map((cell, c) => String(cell ?? '').padEnd(widths[c] ?? 0)).join(' | ')} |`;
  const out = [`## ${table.title}`, '', table.environment, '', line(cells[0] ?? [])];
  out.push(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of cells.slice(1)) out.push(line(row));
  for (const note of table.notes ?? []) out.push('', note);
  return out.join('\n');
}

function formatCell(cell: string | number): string {
  if (typeof cell === 'string') return cell;
  if (Number.isInteger(cell)) return String(cell);
  return Math.abs(cell) >= 100 ? cell.toFixed(0) : cell.toPrecision(3);
}
