/**
 * The seven judge metrics of seed 000 §6, computed from `audit export` records (docs/metrics.md defines each; the
 * live metrics count the same events). Pure: the reports and their tests call these on plain records.
 */
import { routeVerdict } from '../contracts/lifecycle';
import type { CompliancePolicy } from '../contracts/policy';
import type { Verdict } from '../contracts/verdict';
import type { MetricName, MetricsSettings, MetricThreshold } from '../contracts/metrics';
import type { AuditRecord } from './index';

type Thresholds = CompliancePolicy['spec']['thresholds'];

/** What a judge verdict amounted to: approved, rejected, sent to a person, or sent back to the actor. */
export type Judgement = 'APPROVE' | 'REJECT' | 'ESCALATE' | 'CLARIFY';

/** A verdict of the judge: decided by the deterministic rules or the model (tiers lightweight and full review). */
export function isJudgeVerdict(v: Verdict): boolean {
  return v.decided_by === 'rules' || v.decided_by === 'judge';
}

/** A judge verdict routed as the workflow routes it (seed 000 §3.3, the policy's thresholds). */
export function judgementOf(v: Verdict, thresholds: Thresholds): Judgement {
  switch (routeVerdict(v, thresholds)) {
    case 'execute':
      return 'APPROVE';
    case 'reject':
      return 'REJECT';
    case 'escalate':
      return 'ESCALATE';
    case 'clarify':
      return 'CLARIFY';
  }
}

/** The proposal's judge judgement: its LAST judge verdict that is not CLARIFY, or null. */
export function proposalJudgement(r: AuditRecord, thresholds: Thresholds): Judgement | null {
  for (let i = r.verdicts.length - 1; i >= 0; i--) {
    const v = r.verdicts[i]!;
    if (!isJudgeVerdict(v)) continue;
    const j = judgementOf(v, thresholds);
    if (j !== 'CLARIFY') return j;
  }
  return null;
}

/**
 * True when the proposal was sent to a person (any reason): the human-only tier, a person decided or is awaited,
 * or a judge verdict routed to a person was followed by the people's outcome. A shadow proposal's escalating
 * verdict is its last (it executes regardless), so it is not counted as sent to a person.
 */
export function wasEscalated(r: AuditRecord, thresholds: Thresholds): boolean {
  if (r.tier === 'human-only' || r.status === 'awaiting_human' || r.decisions.length > 0) return true;
  if (r.verdicts.some((v) => v.decided_by.startsWith('human:'))) return true;
  return r.verdicts.some(
    (v, i) => i < r.verdicts.length - 1 && isJudgeVerdict(v) && judgementOf(v, thresholds) === 'ESCALATE',
  );
}

/** Seconds from the workflow's start to its first judge verdict that is not CLARIFY (decision latency), or null. */
export function decisionLatencySeconds(r: AuditRecord, thresholds: Thresholds): number | null {
  const start = Date.parse(r.started_at);
  for (const v of r.verdicts) {
    if (!isJudgeVerdict(v) || judgementOf(v, thresholds) === 'CLARIFY') continue;
    const at = Date.parse(v.decided_at ?? '');
    return Number.isFinite(at) && Number.isFinite(start) ? Math.max(0, (at - start) / 1000) : null;
  }
  return null;
}

/** Nearest-rank percentile (`p` in 0..100) of `values`, or null when empty. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}

/** One metric's figure: its value, and the counts behind it (the sample size is the denominator). */
export interface MetricValue {
  value: number | null;
  numerator: number;
  denominator: number;
}

/** Figures the reviews supply (closed reviews; see client/reviews.ts `reviewFigures`). */
export interface ReviewCounts {
  rejectsMarked: number;
  rejectsWrong: number;
  approvesMarked: number;
  approvesWrong: number;
}

const ratio = (numerator: number, denominator: number): MetricValue => ({
  value: denominator > 0 ? numerator / denominator : null,
  numerator,
  denominator,
});

/**
 * The seven metrics (plus the false-approval rate) over `records`, a window `days` long. Definitions: docs/metrics.md.
 */
export function computeMetrics(
  records: readonly AuditRecord[],
  thresholds: Thresholds,
  days: number,
  reviews: ReviewCounts | null,
): Record<MetricName, MetricValue> {
  let approve = 0;
  let judged = 0;
  let overrides = 0;
  let humanDecisions = 0;
  let clarifies = 0;
  let finalApprovals = 0;
  let escalations = 0;
  const latency: Record<'lightweight-approval' | 'full-judge-review', number[]> = {
    'lightweight-approval': [],
    'full-judge-review': [],
  };
  for (const r of records) {
    const j = proposalJudgement(r, thresholds);
    if (j !== null && j !== 'CLARIFY') {
      judged += 1;
      if (j === 'APPROVE') approve += 1;
    }
    const judgeVerdicts = r.verdicts.filter(isJudgeVerdict);
    if (judgeVerdicts.length > 0) {
      // The verdict people were asked about: the last judge verdict (the escalation follows it).
      const earlier = judgeVerdicts[judgeVerdicts.length - 1]!.verdict;
      for (const d of r.decisions) {
        if (!d.accepted) continue;
        humanDecisions += 1;
        if ((d.decision === 'approve' && earlier === 'REJECT') || (d.decision === 'reject' && earlier === 'APPROVE'))
          overrides += 1;
      }
    }
    clarifies += judgeVerdicts.filter((v) => judgementOf(v, thresholds) === 'CLARIFY').length;
    if (r.verdict?.verdict === 'APPROVE') finalApprovals += 1;
    if (wasEscalated(r, thresholds)) escalations += 1;
    if (r.tier === 'lightweight-approval' || r.tier === 'full-judge-review') {
      const s = decisionLatencySeconds(r, thresholds);
      if (s !== null) latency[r.tier].push(s);
    }
  }
  const p95 = (xs: number[]): MetricValue => ({
    value: percentile(xs, 95),
    numerator: xs.length,
    denominator: xs.length,
  });
  return {
    approvalRate: ratio(approve, judged),
    humanOverrideRate: ratio(overrides, humanDecisions),
    falseNegativeRate: reviews ? ratio(reviews.rejectsWrong, reviews.rejectsMarked) : ratio(0, 0),
    falseApprovalRate: reviews ? ratio(reviews.approvesWrong, reviews.approvesMarked) : ratio(0, 0),
    lightweightLatencyP95Seconds: p95(latency['lightweight-approval']),
    fullJudgeLatencyP95Seconds: p95(latency['full-judge-review']),
    clarifyCyclesPerApproval: ratio(clarifies, finalApprovals),
    escalationsPerDay: { value: days > 0 ? escalations / days : null, numerator: escalations, denominator: days },
  };
}

/** Where a metric stands against its policy entry. */
export type MetricState = 'ok' | 'off-target' | 'breached' | 'insufficient-sample' | 'no-data';

/**
 * `breached` past an alert threshold (ratios only with at least `minSample` events), `off-target` outside the
 * target band, `insufficient-sample` when a ratio has too few events to alert on.
 */
export function metricState(m: MetricValue, t: MetricThreshold): MetricState {
  if (m.value === null) return 'no-data';
  const v = m.value;
  const past = (t.alert.below !== undefined && v < t.alert.below) || (t.alert.above !== undefined && v > t.alert.above);
  if (t.minSample !== undefined && m.denominator < t.minSample) return 'insufficient-sample';
  if (past) return 'breached';
  const off = (t.target.min !== undefined && v < t.target.min) || (t.target.max !== undefined && v > t.target.max);
  return off ? 'off-target' : 'ok';
}

/** The metric names in the seed's order (the false-approval rate after the false-negative rate). */
export const METRIC_ORDER: readonly MetricName[] = [
  'approvalRate',
  'humanOverrideRate',
  'falseNegativeRate',
  'falseApprovalRate',
  'lightweightLatencyP95Seconds',
  'fullJudgeLatencyP95Seconds',
  'clarifyCyclesPerApproval',
  'escalationsPerDay',
];

/** Thresholds of the policy, typed for lookup by name. */
export function thresholdOf(settings: MetricsSettings, name: MetricName): MetricThreshold {
  return settings[name];
}
