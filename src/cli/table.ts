/**
 * Tables for a person at a terminal (`list`, `list --hooks`, `mcp check`): aligned columns, a header, every cell
 * through the one display rule for untrusted text (contracts/untrusted-text.ts: line breaks as ⏎, invisible and format
 * characters named, long text cut with a count). Scripts get JSON instead (chooseOutputFormat). Pure.
 */
import { cutDisplayText } from '../contracts/untrusted-text';

/** One column: its header and the widest a cell may be before it is cut. */
export interface Column {
  header: string;
  max: number;
}

/** The rows as aligned text, header first; the last column is not padded. An empty table says `empty`. */
export function renderTable(
  columns: readonly Column[],
  rows: ReadonlyArray<ReadonlyArray<string | null>>,
  empty: string,
): string {
  if (rows.length === 0) return `${empty}\n`;
  const cells = rows.map((row) => columns.map((c, i) => cutDisplayText((row[i] ?? '-').trim() || '-', c.max)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i]!.length)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join('\n')}\n`;
}

/** A time as a person reads it in a table: `2026-12-07 20:41:05` (UTC, as the JSON's times are). */
export function tableTime(iso: string | null | undefined): string {
  return iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '') : '-';
}
