/**
 * Exported proposals (the `audit export` shape) whose metric values are worked out by hand in
 * test/unit/report-metrics.test.ts. Times are offsets from `base` so the CLI test can place them near now.
 */
import type { AuditRecord } from '../../src/audit';
import type { Tier, Verdict } from '../../src/contracts/verdict';

const S = 1000;

function verdict(
  kind: Verdict['verdict'],
  decidedBy: Verdict['decided_by'],
  at: number,
  tier: Tier,
  extra: Partial<Verdict> = {},
): Verdict {
  return {
    proposal_id: 'p',
    verdict: kind,
    reason: `${kind} by ${decidedBy}`,
    constraints: { require_human_review: false },
    escalation: null,
    confidence: 1,
    decided_by: decidedBy,
    tier,
    decided_at: new Date(at).toISOString(),
    ...extra,
  };
}

function record(
  n: number,
  base: number,
  tier: Tier,
  build: (
    t0: number,
    v: (k: Verdict['verdict'], by: Verdict['decided_by'], sec: number, x?: Partial<Verdict>) => Verdict,
  ) => Verdict[],
  decisions: AuditRecord['decisions'] = [],
  status?: AuditRecord['status'],
): AuditRecord {
  const t0 = base + n * 60 * S;
  const verdicts = build(t0, (k, by, sec, x) => verdict(k, by, t0 + sec * S, tier, x));
  const last = verdicts[verdicts.length - 1] ?? null;
  return {
    proposal_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    workflow_id: `proposal-${String(n).padStart(32, '0')}`,
    run_id: `run-${n}`,
    source: 'server',
    status: status ?? (last?.verdict === 'APPROVE' ? 'approved' : 'rejected'),
    verdict: last,
    verdicts: verdicts.map((v) => ({ ...v, proposal_id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}` })),
    execution: null,
    agent_id: '@engineering',
    action_type: tier === 'human-only' ? 'financial_op' : tier === 'lightweight-approval' ? 'issue_comment' : 'exec',
    tier,
    target: 'x',
    audit_flag: false,
    started_at: new Date(t0).toISOString(),
    closed_at: new Date(t0 + 600 * S).toISOString(),
    decisions,
  };
}

const dec = (decision: 'approve' | 'reject', approver: string) => ({
  decision,
  approver,
  via: 'cli' as const,
  accepted: true,
});

/**
 * Eleven proposals in a two-day window starting at `base` (R1..R11), plus R12 a day before it (the
 * previous period). See report-metrics.test.ts for what each one contributes.
 */
export function metricsFixture(base: number): AuditRecord[] {
  const lw = 'lightweight-approval' as const;
  const fj = 'full-judge-review' as const;
  return [
    record(1, base, lw, (_, v) => [v('APPROVE', 'rules', 0.05)]),
    record(2, base, lw, (_, v) => [v('REJECT', 'rules', 0.08, { rule: 'lightweight.deny.secrets' })]),
    record(3, base, fj, (_, v) => [
      v('CLARIFY', 'judge', 1, { confidence: 0.5 }),
      v('APPROVE', 'judge', 61, { confidence: 0.9 }),
    ]),
    record(
      4,
      base,
      fj,
      (_, v) => [
        v('APPROVE', 'judge', 2, { confidence: 0.9, constraints: { require_human_review: true } }),
        v('APPROVE', 'human:scott', 100),
      ],
      [dec('approve', 'scott')],
    ),
    record(5, base, fj, (_, v) => [v('REJECT', 'judge', 3, { confidence: 0.2 }), v('APPROVE', 'human:alice', 50)], [
      dec('approve', 'alice'),
    ]),
    record(6, base, fj, (_, v) => [
      v('CLARIFY', 'judge', 4, { confidence: 0, rule: 'judge.unavailable' }),
      v('REJECT', 'timeout', 500),
    ]),
    record(7, base, 'human-only', (_, v) => [v('REJECT', 'human:scott', 30)], [dec('reject', 'scott')]),
    record(8, base, 'no-judge', (_, v) => [v('APPROVE', 'policy', 0.01)]),
    record(9, base, fj, (_, v) => [v('APPROVE', 'judge', 1.5, { confidence: 0.95 })]),
    record(10, base, fj, (_, v) => [
      v('CLARIFY', 'judge', 1, { confidence: 0.5 }),
      v('CLARIFY', 'judge', 10, { confidence: 0.5 }),
      v('REJECT', 'rules', 20, { rule: 'clarify.max-rounds' }),
    ]),
    // Shadow: a verdict that would go to a person, executed regardless (its last verdict).
    record(11, base, fj, (_, v) => [v('APPROVE', 'judge', 0.5, { confidence: 0.2 })]),
    // The previous period: one lightweight APPROVE.
    record(12 - 24 * 60 - 12, base, lw, (_, v) => [v('APPROVE', 'rules', 0.04)]),
  ];
}

/** A healthy day: two fast approvals and nothing past a threshold. */
export function healthyFixture(base: number): AuditRecord[] {
  return [
    record(1, base, 'lightweight-approval', (_, v) => [v('APPROVE', 'rules', 0.02)]),
    record(2, base, 'full-judge-review', (_, v) => [v('APPROVE', 'judge', 1.2, { confidence: 0.9 })]),
  ];
}
