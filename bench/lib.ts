/** Shared helpers for `npm run bench`: timing, percentiles, and table printing. */

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

const fmt = (v: number | undefined) =>
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
  bench: (server: { address: string; namespace: string }) => Promise<Row[]>,
): Promise<void> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const { startDevServer } = await import('../src/devserver/server');
  const { findTemporalCli } = await import('../src/devserver/temporal-cli');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const server = await startDevServer({
    cliPath: findTemporalCli({ log: console.error }),
    headless: true,
    readyTimeoutMs: 90_000,
  });
  try {
    printTable(title, await bench(server));
  } finally {
    await server.stop();
  }
}
