/**
 * The shell gate's differential check (issue 37), shared by the bounded test (test/security/shell-differential.
 * test.ts) and the large run (scripts/shell-differential.ts): every line is put to the gate; every line it allows at
 * once is run under strace in a fresh scratch project (test/helpers/shell-sandbox.ts) and must only run what it
 * names, write nothing, read only inside the root and outside protected folders, and print no canary. Lines the gate
 * denies or judges are counted, not run: they never run without a person or the judge.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { gateVerdict, DEFAULT_PROTECT, type GateAnswer } from './shell-gate';
import { buildScratch, runAllowed, type Scratch } from './shell-sandbox';
import type { Violation } from './strace-audit';

export interface LineReport {
  index: number;
  line: string;
  verdict: GateAnswer;
  violations: Violation[];
  output: string;
}

export interface DiffReport {
  lines: number;
  allowed: number;
  denied: number;
  judged: number;
  run: number;
  violating: LineReport[];
  /** Time to ask the gate about every line, and to run the allowed ones. */
  gateMs: number;
  runMs: number;
}

export interface DiffOptions {
  strace: string;
  /** Programs the line may name that are test tools (rg, tree): their folders go first on the line's PATH. */
  toolBinaries?: readonly string[];
  /** Lines run at once (default 2: one per core of the CI machine). */
  parallel?: number;
  timeoutMs?: number;
  /** Called after each run line (progress for the large run). */
  onRun?: (done: number, total: number) => void;
  /** A scratch project to reuse (the caller removes it); else one is built and removed. */
  scratch?: Scratch;
}

/** Puts every line to the gate and runs the allowed ones (module comment). */
export async function runDifferential(lines: readonly string[], opts: DiffOptions): Promise<DiffReport> {
  const scratch = opts.scratch ?? buildScratch();
  try {
    const t0 = Date.now();
    const verdicts: GateAnswer[] = [];
    for (const line of lines) verdicts.push(await gateVerdict(line, scratch.root));
    const gateMs = Date.now() - t0;
    const allowed = lines.map((line, index) => ({ line, index })).filter((_, i) => verdicts[i]!.kind === 'allow');
    const extraPath = [...new Set((opts.toolBinaries ?? []).map((b) => dirname(b)))];
    const violating: LineReport[] = [];
    const t1 = Date.now();
    let next = 0;
    let done = 0;
    const worker = async (slot: number) => {
      while (next < allowed.length) {
        const { line, index } = allowed[next++]!;
        const verdict = verdicts[index]!;
        const r = await runAllowed(scratch, slot, line, {
          strace: opts.strace,
          extraPath,
          timeoutMs: opts.timeoutMs,
          programs: verdict.programs,
          protect: DEFAULT_PROTECT,
        });
        if (r.violations.length > 0)
          violating.push({ index, line, verdict, violations: r.violations, output: r.output });
        done += 1;
        opts.onRun?.(done, allowed.length);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.parallel ?? 2) }, (_, slot) => worker(slot)));
    violating.sort((a, b) => a.index - b.index);
    return {
      lines: lines.length,
      allowed: allowed.length,
      denied: verdicts.filter((v) => v.kind === 'deny').length,
      judged: verdicts.filter((v) => v.kind === 'judge').length,
      run: done,
      violating,
      gateMs,
      runMs: Date.now() - t1,
    };
  } finally {
    if (!opts.scratch) removeScratch(scratch);
  }
}

/** Removes a scratch project and its run slots. */
export function removeScratch(scratch: Scratch): void {
  rmSync(scratch.base, { recursive: true, force: true });
}

/** The corpus file's lines: one command per line; blank lines and lines starting with `#` are not commands. */
export function readCorpus(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.startsWith('#'));
}

/** How many corpus lines the gate allows at once, and the ones it does not (with why). */
export async function corpusFigures(lines: readonly string[], root: string) {
  const notAllowed: Array<{ line: string; verdict: GateAnswer }> = [];
  for (const line of lines) {
    const verdict = await gateVerdict(line, root);
    if (verdict.kind !== 'allow') notAllowed.push({ line, verdict });
  }
  return { total: lines.length, allowed: lines.length - notAllowed.length, notAllowed };
}

/** Findings in the order they matter to a reader: leaks and runs first, reads of git's own files last. */
function rank(f: Violation): number {
  const order = ['canary', 'marker', 'exec', 'write', 'read-outside', 'read-protected', 'timeout'];
  return order.indexOf(f.kind) * 2 + (f.kind === 'read-protected' && / \(\.git\)$/.test(f.detail) ? 1 : 0);
}

/** The violating lines as a readable list: the line (JSON, so newlines and quotes show), the verdict, each finding. */
export function formatViolations(report: Pick<DiffReport, 'violating'>, limit = 60): string {
  const shown = report.violating.slice(0, limit).map((v) => {
    const findings = [
      ...new Set([...v.violations].sort((a, b) => rank(a) - rank(b)).map((f) => `${f.kind}: ${f.detail}`)),
    ];
    const listed = findings.slice(0, 6).map((f) => `    - ${f}`);
    if (findings.length > 6) listed.push(`    - ... and ${findings.length - 6} more`);
    return [`  #${v.index} ${JSON.stringify(v.line)}  [gate: ${v.verdict.kind} ${v.verdict.detail}]`, ...listed].join(
      '\n',
    );
  });
  const more = report.violating.length - shown.length;
  return [...shown, ...(more > 0 ? [`  ... and ${more} more`] : [])].join('\n');
}
