/**
 * The replay's comparison (src/replay/compare.ts): recorded outcomes read from audit records, the transition matrix,
 * the changed proposals with approvals of what a person rejected first, the override rate against people's
 * decisions, and the §6 metrics under both sides; plus the text, JSON and HTML renderings of one replay.
 */
import { describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/audit';
import type { Verdict } from '../../src/contracts/verdict';
import {
  changedRows,
  overrideRate,
  sideMetrics,
  spanDays,
  transitionMatrix,
  type ReplayRow,
} from '../../src/replay/compare';
import type { Outcome } from '../../src/replay/decide';
import { renderReplayHtml } from '../../src/replay/html';
import { renderText, toJson } from '../../src/replay/render';
import { rowOf, type ReplayResult } from '../../src/replay/run';

const T = { clarify: 0.6, human: 0.3 };

function verdict(kind: Verdict['verdict'], by: Verdict['decided_by'], extra: Partial<Verdict> = {}): Verdict {
  return {
    proposal_id: 'p',
    verdict: kind,
    reason: `${by} says ${kind}`,
    constraints: { require_human_review: false },
    escalation: null,
    confidence: 1,
    decided_by: by,
    tier: 'full-judge-review',
    ...extra,
  };
}

function record(id: string, verdicts: Verdict[], extra: Partial<AuditRecord> = {}): AuditRecord {
  return {
    proposal_id: id,
    workflow_id: `wf-${id}`,
    run_id: `run-${id}`,
    status: verdicts.at(-1)?.verdict === 'APPROVE' ? 'approved' : 'rejected',
    verdict: verdicts.at(-1) ?? null,
    verdicts,
    execution: null,
    agent_id: '@coder',
    action_type: 'shell_command',
    tier: 'full-judge-review',
    target: null,
    audit_flag: false,
    started_at: `2026-12-0${(id.charCodeAt(0) % 7) + 1}T10:00:00.000Z`,
    closed_at: '2026-12-07T00:00:00.000Z',
    source: 'server',
    decisions: [],
    ...extra,
  };
}

/** A row: the recorded record, and the candidate's outcome with the verdicts it would have recorded. */
function row(r: AuditRecord, outcome: Outcome, verdicts: Verdict[]): ReplayRow {
  const last = verdicts.at(-1);
  return rowOf(
    { record: r, proposal: null, clarifications: [] },
    {
      outcome,
      tier: 'full-judge-review',
      shadow: false,
      rule: last?.rule ?? null,
      reason: last?.reason ?? 'gate',
      decided_by: last?.decided_by ?? 'gate',
      verdicts,
      clarify_rounds: 0,
      model: { called: 0, reused: 0 },
    },
    T,
  );
}

const approveRules = verdict('APPROVE', 'rules', { rule: 'rules.passed' });
const rejectRules = verdict('REJECT', 'rules', { rule: 'exec.allowlist' });
const escalate = verdict('CLARIFY', 'rules', {
  rule: 'judge.no-model.escalate',
  constraints: { require_human_review: true },
});
const personRejected = record('a', [escalate, verdict('REJECT', 'human:scott')], {
  decisions: [
    { decision: 'reject', approver: 'scott', reason: 'no', accepted: true } as AuditRecord['decisions'][number],
  ],
});
const personApproved = record('b', [escalate, verdict('APPROVE', 'human:scott')], {
  decisions: [{ decision: 'approve', approver: 'scott', accepted: true } as AuditRecord['decisions'][number]],
});
const approved = record('c', [approveRules]);
const rejected = record('d', [rejectRules]);

const rows = [
  row(approved, 'APPROVE', [approveRules]),
  row(rejected, 'APPROVE', [approveRules]),
  row(personApproved, 'REJECT', [rejectRules]),
  row(personRejected, 'APPROVE', []),
];

describe('recorded side', () => {
  it('reads where each run ended before any person, and what the person decided', () => {
    expect(rows.map((r) => [r.recorded.outcome, r.recorded.person])).toEqual([
      ['APPROVE', null],
      ['REJECT', null],
      ['person', 'approve'],
      ['person', 'reject'],
    ]);
    // The deciding verdict is the last one no person gave.
    expect(rows[3]!.recorded.rule).toBe('judge.no-model.escalate');
  });
});

describe('transition matrix and changes', () => {
  it('counts recorded -> candidate', () => {
    const m = transitionMatrix(rows);
    expect(m.APPROVE.APPROVE).toBe(1);
    expect(m.REJECT.APPROVE).toBe(1);
    expect(m.person.REJECT).toBe(1);
    expect(m.person.APPROVE).toBe(1);
    const total = Object.values(m).reduce((n, to) => n + Object.values(to).reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(rows.length);
  });

  it('lists approvals of what a person rejected first, then other approvals, then the rest', () => {
    expect(changedRows(rows).map((r) => r.proposal_id)).toEqual(['a', 'd', 'b']);
  });
});

describe('metrics under both sides', () => {
  it("computes the override rate against the people's decisions", () => {
    // Recorded: the judge leaned nowhere (a no-model CLARIFY asking a person): no override.
    expect(overrideRate(rows, 'recorded', T)).toEqual({ value: 0, numerator: 0, denominator: 2 });
    // Candidate: approves what scott rejected, rejects what scott approved.
    expect(overrideRate(rows, 'candidate', T)).toEqual({ value: 1, numerator: 2, denominator: 2 });
  });

  it('computes approval rate and escalations per day with the audit metrics', () => {
    const recorded = sideMetrics(rows, 'recorded', T, 7);
    const candidate = sideMetrics(rows, 'candidate', T, 7);
    expect(recorded.approvalRate).toMatchObject({ numerator: 1, denominator: 2 });
    expect(recorded.escalationsPerDay).toMatchObject({ numerator: 2, denominator: 7 });
    expect(candidate.approvalRate).toMatchObject({ numerator: 2, denominator: 3 });
    expect(candidate.escalationsPerDay).toMatchObject({ numerator: 0 });
  });

  it('spans at least a day, or the window asked for', () => {
    expect(spanDays([])).toBe(1);
    expect(spanDays(rows)).toBeGreaterThanOrEqual(1);
    expect(spanDays(rows, 7 * 86_400_000)).toBe(7);
  });
});

describe('renderings', () => {
  const result: ReplayResult = {
    replayed: rows.length,
    from_archive: 0,
    unreadable: [],
    days: 7,
    rows,
    matrix: transitionMatrix(rows),
    changed: changedRows(rows),
    metrics: { recorded: sideMetrics(rows, 'recorded', T, 7), candidate: sideMetrics(rows, 'candidate', T, 7) },
    model: { plan: null, confirmed: false, called: 0, reused: 0, needs_model: 0 },
  };
  const labels = { candidate: 'wide.yaml', recorded: 'default.yaml', window: 'the last week' };

  it('prints the matrix, the metric shifts and the approvals of what a person rejected first', () => {
    const text = renderText(result, labels);
    expect(text).toContain('Replayed 4 recorded proposals');
    expect(text).toMatch(/Override rate vs people's decisions\s+0\.0 %\s+100\.0 %\s+\+100\.0 pts/);
    const changed = text.slice(text.indexOf('Changed (3)'));
    expect(changed.indexOf('! approves what a person rejected: a')).toBeLessThan(changed.indexOf('  d  '));
  });

  it('escapes untrusted text: control characters in the terminal, markup in HTML', () => {
    const hostile = row(
      record('e', [verdict('REJECT', 'rules', { rule: 'x', reason: '\u001b[2J<script>x</script>' })]),
      'APPROVE',
      [approveRules],
    );
    const r = { ...result, rows: [hostile], changed: [hostile] };
    expect(renderText(r, labels)).not.toContain('\u001b');
    const html = renderReplayHtml(r, labels);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
    expect(html).toContain('<svg');
  });

  it('gives JSON rows without the records they were computed from', () => {
    const json = toJson(result, labels) as { proposals: Array<Record<string, unknown>> };
    expect(json.proposals).toHaveLength(4);
    expect(json.proposals[0]).not.toHaveProperty('recordedRecord');
  });
});
