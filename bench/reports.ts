/**
 * Report generation for 10,000 proposals (issue 11 figure): `buildReport` over synthetic `audit export` records
 * (every tier and path: approvals, REJECTs, CLARIFY rounds, escalations decided by people), then each format, and
 * the built CLI end to end on an export file (`report --input`, process start included). p50 over repeated runs.
 * No Temporal server: a report is computed from exported records. Run alone: node --import tsx bench/reports.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AuditRecord } from '../src/audit';
import { buildReport, renderMarkdown } from '../src/audit/report';
import { renderHtml } from '../src/audit/report-html';
import type { Tier, Verdict } from '../src/contracts/verdict';
import { defaultPolicyWith } from '../src/policy/load';
import { printTable, summarize, type Row } from './lib';

export const REPORT_BENCH = { N: 10_000, RUNS: 15, CLI_RUNS: 5 };
const DAY = 86_400_000;

/** Deterministic pseudo-random numbers (mulberry32), so every run measures the same records. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` proposals spread over the 7 days before `end` and the 7 before those (the previous period). */
export function syntheticRecords(n: number, end: number): AuditRecord[] {
  const r = rng(42);
  const out: AuditRecord[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = end - 14 * DAY + Math.floor(r() * 14 * DAY);
    const roll = r();
    const tier: Tier =
      roll < 0.1 ? 'no-judge' : roll < 0.45 ? 'lightweight-approval' : roll < 0.95 ? 'full-judge-review' : 'human-only';
    const v = (kind: Verdict['verdict'], by: Verdict['decided_by'], ms: number, x: Partial<Verdict> = {}): Verdict => ({
      proposal_id: `p${i}`,
      verdict: kind,
      reason: `${kind} (${by}): synthetic reason ${i}`,
      constraints: { require_human_review: false },
      escalation: null,
      confidence: 0.9,
      decided_by: by,
      tier,
      decided_at: new Date(t0 + ms).toISOString(),
      ...x,
    });
    const verdicts: Verdict[] = [];
    const decisions: AuditRecord['decisions'] = [];
    const x = r();
    if (tier === 'no-judge') verdicts.push(v('APPROVE', 'policy', 5));
    else if (tier === 'lightweight-approval')
      verdicts.push(v(x < 0.8 ? 'APPROVE' : 'REJECT', 'rules', 20 + r() * 200, { rule: 'lightweight.topic' }));
    else if (tier === 'human-only') {
      const approve = x < 0.6;
      verdicts.push(v(approve ? 'APPROVE' : 'REJECT', 'human:scott', 60_000 + r() * 3_600_000));
      decisions.push({ decision: approve ? 'approve' : 'reject', approver: 'scott', via: 'cli', accepted: true });
    } else {
      if (x < 0.2) verdicts.push(v('CLARIFY', 'judge', 800 + r() * 2000, { confidence: 0.5 }));
      const y = r();
      const at = 1000 + r() * 4000 + (verdicts.length > 0 ? 60_000 : 0);
      if (y < 0.7) verdicts.push(v('APPROVE', 'judge', at));
      else if (y < 0.85) verdicts.push(v('REJECT', 'judge', at, { rule: 'judge.model' }));
      else {
        verdicts.push(v('APPROVE', 'judge', at, { constraints: { require_human_review: true } }));
        const approve = r() < 0.7;
        verdicts.push(v(approve ? 'APPROVE' : 'REJECT', 'human:alice', at + 600_000));
        decisions.push({ decision: approve ? 'approve' : 'reject', approver: 'alice', via: 'cli', accepted: true });
      }
    }
    const last = verdicts[verdicts.length - 1]!;
    out.push({
      proposal_id: `p${i}`,
      workflow_id: `proposal-${i.toString(16).padStart(32, '0')}`,
      run_id: `run-${i}`,
      source: 'server',
      status: last.verdict === 'APPROVE' ? 'approved' : 'rejected',
      verdict: last,
      verdicts,
      execution: null,
      agent_id: '@engineering',
      action_type: 'exec',
      tier,
      target: 'repo',
      audit_flag: false,
      started_at: new Date(t0).toISOString(),
      closed_at: new Date(t0 + 700_000).toISOString(),
      decisions,
    });
  }
  return out;
}

function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

export function benchReports(): Row[] {
  const { N, RUNS, CLI_RUNS } = REPORT_BENCH;
  const end = Date.parse('2026-11-30T00:00:00Z');
  const records = syntheticRecords(N, end);
  const policy = defaultPolicyWith({});
  const input = {
    kind: 'summary' as const,
    period: 'bench',
    range: { start: end - 7 * DAY, end },
    records,
    policy,
    reviews: { current: null, previous: null },
    review: null,
  };
  const build: number[] = [];
  const md: number[] = [];
  const html: number[] = [];
  let bytes = 0;
  let incidents = 0;
  for (let i = 0; i < RUNS; i++) {
    let report!: ReturnType<typeof buildReport>;
    build.push(time(() => (report = buildReport(input))));
    md.push(time(() => renderMarkdown(report)));
    html.push(
      time(() => {
        bytes = renderHtml(report).length;
      }),
    );
    incidents = report.incidents.length;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-report-'));
  const cli: number[] = [];
  try {
    const file = join(dir, 'export.jsonl');
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const bin = fileURLToPath(new URL('../bin/agent-judge.mjs', import.meta.url));
    const since = new Date(end - 7 * DAY).toISOString();
    for (let i = 0; i < CLI_RUNS; i++) {
      cli.push(
        time(() =>
          execFileSync(
            process.execPath,
            [
              bin,
              'report',
              'summary',
              '--input',
              file,
              '--since',
              since,
              '--format',
              'html',
              '--out',
              join(dir, 'r.html'),
            ],
            {
              env: { ...process.env, AGENT_JUDGE_POLICY: undefined },
              stdio: 'ignore',
            },
          ),
        ),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return [
    summarize(`buildReport: ${N} proposals (2 periods), 7 metrics`, build, `${incidents} REJECTs/escalations listed`),
    summarize('render Markdown', md),
    summarize('render HTML (inline SVG)', html, `${(bytes / 1024).toFixed(0)} KiB`),
    summarize(`CLI: report --input (${N} lines) --format html, process start included`, cli),
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  printTable(`Reports: ${REPORT_BENCH.N} proposals (issue 11), ms`, benchReports());
}
