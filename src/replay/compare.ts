/**
 * What a replay found: each proposal's recorded and candidate outcome, the transition matrix between them, the
 * changed proposals (a candidate that approves what a person rejected first), and seed 000 §6's metrics under both.
 * Pure: the CLI, the report and the tests call these on plain rows. The metrics are the audit's own
 * (src/audit/metrics.ts `computeMetrics`), computed over the recorded records and over the same records as the
 * candidate would have written them.
 */
import type { AuditRecord } from '../audit';
import { computeMetrics, isJudgeVerdict, judgementOf, wasEscalated, type MetricValue } from '../audit/metrics';
import type { CompliancePolicy } from '../contracts/policy';
import type { Verdict } from '../contracts/verdict';
import { OUTCOMES, type CandidateDecision, type Outcome } from './decide';

type Thresholds = CompliancePolicy['spec']['thresholds'];

/** A person's recorded decision on a proposal, or null when none decided it. */
export type PersonDecision = 'approve' | 'reject' | null;

/** One side (recorded or candidate) of one proposal. */
export interface Side {
  outcome: Outcome;
  tier: string | null;
  rule: string | null;
  reason: string;
  decided_by: string;
}

/** One replayed proposal. */
export interface ReplayRow {
  proposal_id: string;
  workflow_id: string;
  agent_id: string | null;
  action_type: string | null;
  started_at: string;
  source: 'server' | 'archive';
  recorded: Side & { person: PersonDecision };
  candidate: Side & { gate?: string; clarify_rounds: number; model: CandidateDecision['model'] };
  /** Kept for the metrics; not printed. */
  recordedRecord: AuditRecord;
  candidateVerdicts: Verdict[];
}

const isHuman = (v: Verdict) => v.decided_by.startsWith('human:');

/** What people decided: the final verdict when a person gave it, else the last accepted decision. */
export function personDecision(r: AuditRecord): PersonDecision {
  if (r.verdict && isHuman(r.verdict)) return r.verdict.verdict === 'APPROVE' ? 'approve' : 'reject';
  const last = r.decisions.filter((d) => d.accepted).at(-1);
  return last ? last.decision : null;
}

/** Where the recorded run ended before any person acted (the same words as the candidate's {@link Outcome}). */
export function recordedOutcome(r: AuditRecord, thresholds: Thresholds): Exclude<Outcome, 'needs-model'> {
  if (wasEscalated(r, thresholds)) return 'person';
  if (r.status === 'awaiting_clarification') return 'CLARIFY';
  return r.verdict?.verdict === 'APPROVE' ? 'APPROVE' : 'REJECT';
}

/** The recorded verdict that decided (the last one no person gave), as one side of a row. */
export function recordedSide(r: AuditRecord, thresholds: Thresholds): ReplayRow['recorded'] {
  const deciding = [...r.verdicts].reverse().find((v) => !isHuman(v)) ?? r.verdict;
  return {
    outcome: recordedOutcome(r, thresholds),
    tier: r.tier,
    rule: deciding?.rule ?? null,
    reason: deciding?.reason ?? (r.tier === 'human-only' ? 'tier human-only: a person decides' : r.status),
    decided_by: deciding?.decided_by ?? 'policy',
    person: personDecision(r),
  };
}

/** Counts of recorded outcome (rows) by candidate outcome (columns). */
export type TransitionMatrix = Record<Outcome, Record<Outcome, number>>;

export function transitionMatrix(rows: readonly Pick<ReplayRow, 'recorded' | 'candidate'>[]): TransitionMatrix {
  const m = Object.fromEntries(
    OUTCOMES.map((from) => [from, Object.fromEntries(OUTCOMES.map((to) => [to, 0]))]),
  ) as TransitionMatrix;
  for (const r of rows) m[r.recorded.outcome][r.candidate.outcome] += 1;
  return m;
}

/** True when the candidate performs what a person refused: the change a reviewer must see first. */
export function approvesWhatAPersonRejected(r: Pick<ReplayRow, 'recorded' | 'candidate'>): boolean {
  return r.candidate.outcome === 'APPROVE' && r.recorded.person === 'reject';
}

/** The rank of a change: approvals of what a person rejected, then other approvals, then the rest. */
function changeRank(r: ReplayRow): number {
  if (approvesWhatAPersonRejected(r)) return 0;
  if (r.candidate.outcome === 'APPROVE') return 1;
  if (r.candidate.outcome === 'REJECT' && r.recorded.person === 'approve') return 2;
  return 3;
}

/** The proposals whose outcome changed, most dangerous first, then by time. */
export function changedRows(rows: readonly ReplayRow[]): ReplayRow[] {
  return rows
    .filter((r) => r.recorded.outcome !== r.candidate.outcome)
    .sort((a, b) => changeRank(a) - changeRank(b) || a.started_at.localeCompare(b.started_at));
}

/** The run the candidate would have recorded: its verdicts, where it ended, a person's decisions only if asked. */
export function candidateRecord(row: ReplayRow, withDecisions: boolean): AuditRecord {
  const r = row.recordedRecord;
  const c = row.candidate;
  const status = {
    APPROVE: 'approved',
    REJECT: 'rejected',
    person: 'awaiting_human',
    CLARIFY: 'awaiting_clarification',
  };
  return {
    ...r,
    tier: c.tier,
    status: status[c.outcome as keyof typeof status] as AuditRecord['status'],
    verdict: row.candidateVerdicts.at(-1) ?? null,
    verdicts: row.candidateVerdicts,
    decisions: withDecisions || c.outcome === 'person' ? r.decisions : [],
  };
}

/** What a person's decision is compared with: the side's outcome, or its judge's last verdict when it asked one. */
function position(outcome: Outcome, verdicts: readonly Verdict[], thresholds: Thresholds): 'APPROVE' | 'REJECT' | null {
  if (outcome === 'APPROVE' || outcome === 'REJECT') return outcome;
  const last = [...verdicts].reverse().find((v) => isJudgeVerdict(v) && judgementOf(v, thresholds) !== 'CLARIFY');
  return last ? (last.verdict === 'APPROVE' ? 'APPROVE' : last.verdict === 'REJECT' ? 'REJECT' : null) : null;
}

/**
 * Override rate against the people's recorded decisions: of the proposals a person decided, how many the side
 * decided (or, when it asked a person, its judge leaned) the other way.
 */
export function overrideRate(
  rows: readonly ReplayRow[],
  side: 'recorded' | 'candidate',
  thresholds: Thresholds,
): MetricValue {
  let n = 0;
  let against = 0;
  for (const r of rows) {
    const person = r.recorded.person;
    if (person === null || r[side].outcome === 'needs-model') continue;
    n += 1;
    const verdicts = side === 'recorded' ? r.recordedRecord.verdicts : r.candidateVerdicts;
    const p = position(r[side].outcome, verdicts, thresholds);
    if ((p === 'APPROVE' && person === 'reject') || (p === 'REJECT' && person === 'approve')) against += 1;
  }
  return { value: n > 0 ? against / n : null, numerator: against, denominator: n };
}

/** The four seed 000 §6 metrics a replay compares. */
export const REPLAY_METRICS = [
  'approvalRate',
  'escalationsPerDay',
  'clarifyCyclesPerApproval',
  'overrideRate',
] as const;
export type ReplayMetric = (typeof REPLAY_METRICS)[number];
export type ReplayMetrics = Record<ReplayMetric, MetricValue>;

/** The metrics of one side over `days` days. Rows the candidate could not decide without a model are left out. */
export function sideMetrics(
  rows: readonly ReplayRow[],
  side: 'recorded' | 'candidate',
  thresholds: Thresholds,
  days: number,
): ReplayMetrics {
  const decided = rows.filter((r) => r.candidate.outcome !== 'needs-model' || side === 'recorded');
  const records = decided.map((r) => (side === 'recorded' ? r.recordedRecord : candidateRecord(r, false)));
  const m = computeMetrics(records, thresholds, days, null);
  return {
    approvalRate: m.approvalRate,
    escalationsPerDay: m.escalationsPerDay,
    clarifyCyclesPerApproval: m.clarifyCyclesPerApproval,
    overrideRate: overrideRate(decided, side, thresholds),
  };
}

/** How many days a replay spans: the selection's window when given, else the rows' own span (at least one day). */
export function spanDays(rows: readonly Pick<ReplayRow, 'started_at'>[], windowMs?: number): number {
  if (windowMs !== undefined) return Math.max(windowMs / 86_400_000, 1 / 24);
  const times = rows.map((r) => Date.parse(r.started_at)).filter(Number.isFinite);
  if (times.length === 0) return 1;
  return Math.max(1, Math.ceil((Math.max(...times) - Math.min(...times)) / 86_400_000));
}
