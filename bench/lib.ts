/** Shared helpers for `npm run bench`: timing, percentiles, CPU accounting, and table printing. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** The Temporal dev server a bench section runs against; `pid` lets a section read the server's CPU time. */
export interface BenchServer {
  address: string;
  namespace: string;
  pid?: number;
}

export interface Row {
  /** What was measured, e.g. `lightweight: submit -> final verdict`. */
  name: string;
  /** Number of samples or operations. */
  n: number;
  p50?: number;
  p95?: number;
  p99?: number;
  /** Unit for p50/p95/p99 (default ms). */
  unit?: string;
  /** Extra figure: throughput, ratio, bytes... as ready-to-print text. */
  note?: string;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] as number;
}

/** The `q`th percentile of samples in any order. */
export function percentileOf(samples: readonly number[], q: number): number {
  return percentile(
    [...samples].sort((a, b) => a - b),
    q,
  );
}

/** The items starting at `round` (mod length): interleaved rows each take every position in turn. */
export function rotated<T>(items: readonly T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** p50/p95/p99 of a list of samples (milliseconds). */
export function summarize(name: string, samples: readonly number[], note?: string): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    name,
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    note,
  };
}

/** Milliseconds an async call takes. */
export async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

/** Runs `fn` for each item with at most `concurrency` in flight. */
export async function pool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i] as T, i);
    }
  });
  await Promise.all(workers);
}

export const fmt = (v: number | undefined): string =>
  v === undefined || Number.isNaN(v) ? '-' : v < 10 ? v.toFixed(2) : v.toFixed(1);

export function printTable(title: string, rows: readonly Row[]): void {
  const header = ['measure', 'n', 'p50', 'p95', 'p99', 'unit', 'note'];
  const body = rows.map((r) => [
    r.name,
    String(r.n),
    fmt(r.p50),
    fmt(r.p95),
    fmt(r.p99),
    r.p50 === undefined ? '' : (r.unit ?? 'ms'),
    r.note ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 || i === 6 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const b of body) console.log(line(b));
}

/**
 * Runs one bench file on its own (`node --import tsx bench/<file>.ts`): its own in-memory dev server, one table.
 * Loaded lazily so `npm run bench`, which starts one server for every section, pays nothing for it.
 */
export async function runAlone(
  title: string,
  bench: (server: BenchServer) => Promise<Row[]>,
  after?: (rows: Row[]) => void,
): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const { startDevServer } = await import('../src/devserver/server');
  const { findTemporalCli } = await import('../src/devserver/temporal-cli');
  const { createLogger } = await import('../src/cli/shared');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({
    cliPath: findTemporalCli({ logger: createLogger() }),
    headless: true,
    readyTimeoutMs: 90_000,
  });
  try {
    const rows = await bench({ address: server.address, namespace: server.namespace, pid: server.process.pid });
    printTable(title, rows);
    after?.(rows);
  } finally {
    await server.stop();
  }
}

/** Milliseconds of CPU (user + system) of this process so far: the bench's own workers and client. */
export function ownCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Milliseconds of CPU (user + system, all threads) another process has used so far, from /proc; NaN if unknown. */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15 (proc(5)); in clock ticks.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: 100 on Linux x86 and arm; read once from getconf where it can be. */
const CLOCK_TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** The lines heading a bench run, so a table can be quoted with its date and machine. */
export function machineHeader(temporalCli: string): string[] {
  let model = cpus()[0]?.model ?? 'unknown CPU';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux: os.cpus() said it
  }
  let temporal = 'unknown';
  try {
    temporal = execFileSync(temporalCli, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    // reported as unknown
  }
  let load = '';
  try {
    load = `, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')} at start`;
  } catch {
    // not Linux
  }
  return [
    `date: ${new Date().toISOString()}`,
    `machine: ${cpus().length} cores, ${model}${load}`,
    `node: ${process.version}; ${temporal}`,
  ];
}

/** A target from the issue beside the figure it bounds. */
export interface Target {
  name: string;
  /** The measured figure, already in the target's unit. */
  value: number;
  /** The bound. */
  limit: number;
  /** `max`: the value must be at most the limit; `min`: at least. */
  kind: 'max' | 'min';
  unit: string;
}

/** "met" or "missed", and by how much, in the target's unit and as a percentage of the limit. */
export function verdictOf(t: Target): string {
  if (Number.isNaN(t.value)) return 'not measured';
  const met = t.kind === 'max' ? t.value <= t.limit : t.value >= t.limit;
  const by = Math.abs(t.value - t.limit);
  const pct = t.limit === 0 ? '' : `, ${((by / t.limit) * 100).toFixed(0)} %`;
  return met ? `met (${fmt(by)}${t.unit} to spare${pct})` : `MISSED by ${fmt(by)}${t.unit}${pct}`;
}

/** A table of ready-made cells: the first column left-aligned, the others right-aligned. */
export function printColumns(title: string, header: readonly string[], rows: ReadonlyArray<readonly string[]>): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

export function printTargets(title: string, targets: readonly Target[]): void {
  const rows = targets.map((t) => [
    t.name,
    `${fmt(t.value)}${t.unit}`,
    `${t.kind === 'max' ? '<=' : '>='} ${fmt(t.limit)}${t.unit}`,
    verdictOf(t),
  ]);
  const header = ['target', 'measured', 'bound', 'verdict'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(`\n## ${title}\n`);
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}
