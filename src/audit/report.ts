/**
 * `agent-judge report`: the seven metrics of seed 000 §6 with sample sizes, targets, thresholds and the change
 * since the previous period; every REJECT and escalation (rule, reason, dispute, who decided, how fast); the
 * review's progress. Built from `audit export` records (never a history reader of its own) and the reviews'
 * figures; rendered as JSON, Markdown or one self-contained HTML file (report-html.ts). Pure.
 */
import type { CompliancePolicy } from '../contracts/policy';
import type { Verdict } from '../contracts/verdict';
import type { MetricName, MetricThreshold } from '../contracts/metrics';
import { periodRange, type ReviewMemo, type ReviewStatus } from '../contracts/review';
import type { AuditRecord } from './index';
import {
  computeMetrics,
  decisionLatencySeconds,
  isJudgeVerdict,
  METRIC_ORDER,
  metricState,
  percentile,
  proposalJudgement,
  wasEscalated,
  type MetricState,
  type ReviewCounts,
} from './metrics';

export const REPORT_KINDS = ['summary', 'weekly', 'spot-check'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

const DAY_MS = 86_400_000;

/** How each metric is shown. */
export const METRIC_LABELS: Record<MetricName, { label: string; unit: 'ratio' | 'seconds' | 'per-day' }> = {
  approvalRate: { label: 'Judge approval rate', unit: 'ratio' },
  humanOverrideRate: { label: 'Human override rate', unit: 'ratio' },
  falseNegativeRate: { label: 'False negative rate (audited)', unit: 'ratio' },
  falseApprovalRate: { label: 'False approval rate (spot-checks)', unit: 'ratio' },
  lightweightLatencyP95Seconds: { label: 'Latency p95: lightweight check', unit: 'seconds' },
  fullJudgeLatencyP95Seconds: { label: 'Latency p95: full judge review', unit: 'seconds' },
  clarifyCyclesPerApproval: { label: 'Clarify cycles per approval', unit: 'ratio' },
  escalationsPerDay: { label: 'Escalations to a person per day', unit: 'per-day' },
};

export interface ReportMetric {
  name: MetricName;
  label: string;
  unit: 'ratio' | 'seconds' | 'per-day';
  value: number | null;
  numerator: number;
  /** The sample size (for a latency: the proposals measured; for escalations per day: the days). */
  denominator: number;
  target: MetricThreshold['target'];
  alert: MetricThreshold['alert'];
  minSample: number | null;
  state: MetricState;
  previous: number | null;
  change: number | null;
}

/** One REJECT or escalation, as a reviewer reads it. */
export interface ReportIncident {
  proposal_id: string;
  workflow_id: string;
  agent_id: string | null;
  action_type: string | null;
  tier: string | null;
  status: string;
  started_at: string;
  verdict: string | null;
  escalated: boolean;
  rule: string | null;
  reason: string | null;
  /** Why people were asked and what the judge said (the dispute's positions as the history holds them). */
  dispute: { reason: string; judge_position: string | null } | null;
  decided_by: string | null;
  decisions: Array<{ decision: string; approver: string; reason: string | null }>;
  /** Seconds from the start to the final verdict. */
  seconds_to_decide: number | null;
  review_mark: { mark: string; should_be: string | null; reviewer: string; note: string | null } | null;
}

export interface ReviewProgress {
  review_id: string;
  state: 'open' | 'closed';
  in_review: number;
  marked: number;
  false_negative_rate: number | null;
  false_approval_rate: number | null;
}

export interface Report {
  kind: ReportKind;
  period: string;
  range: { start: string; end: string };
  previous_range: { start: string; end: string };
  generated_at: string;
  policy: string;
  proposals: number;
  /**
   * Who approved what people would otherwise have been asked about: accepted human decisions beside proposals scoped
   * grants approved (docs/grants.md), and how many distinct grants did.
   */
  approvals: { human_decisions: number; grant_uses: number; grants: number };
  metrics: ReportMetric[];
  /** Names of the metrics past an alert threshold (what `--check` exits 3 on). */
  breached: MetricName[];
  incidents: ReportIncident[];
  review: ReviewProgress | null;
  charts: {
    approvalByDay: Array<{ day: string; rate: number | null; judged: number }>;
    latencyByTier: Array<{ tier: string; p50: number | null; p95: number | null; p99: number | null; n: number }>;
    escalationsByDay: Array<{ day: string; count: number }>;
  };
}

export interface ReportInput {
  kind: ReportKind;
  period: string;
  range: { start: number; end: number };
  /** Records covering the previous period and this one (others are ignored). */
  records: readonly AuditRecord[];
  policy: CompliancePolicy;
  reviews: { current: ReviewCounts | null; previous: ReviewCounts | null };
  review: ReviewStatus | null;
  now?: number;
}

function within(r: AuditRecord, range: { start: number; end: number }): boolean {
  const t = Date.parse(r.started_at);
  return t >= range.start && t < range.end;
}

function dayKey(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Why people were asked, in the words the workflow's dispute uses (ProposalState.escalationReason). */
function escalationReason(
  r: AuditRecord,
  asked: Verdict | undefined,
  thresholds: CompliancePolicy['spec']['thresholds'],
): string {
  if (!asked) return `tier ${r.tier ?? 'unknown'}: a person must decide`;
  if (asked.escalation) return asked.escalation.reason;
  if (asked.confidence < thresholds.human)
    return `judge unsure (confidence ${asked.confidence.toFixed(2)} is below ${thresholds.human})`;
  return 'the judge asked for human review';
}

function incidentOf(r: AuditRecord, policy: CompliancePolicy, review: ReviewStatus | null): ReportIncident {
  const thresholds = policy.spec.thresholds;
  const final = r.verdict;
  const escalated = wasEscalated(r, thresholds);
  const judge = r.verdicts.filter(isJudgeVerdict);
  const asked = judge[judge.length - 1];
  const decidedAt = Date.parse(final?.decided_at ?? '');
  const mark = review?.marks.filter((m) => m.workflow_id === r.workflow_id).at(-1);
  return {
    proposal_id: r.proposal_id,
    workflow_id: r.workflow_id,
    agent_id: r.agent_id,
    action_type: r.action_type,
    tier: r.tier,
    status: r.status,
    started_at: r.started_at,
    verdict: final?.verdict ?? null,
    escalated,
    rule: final?.rule ?? asked?.rule ?? null,
    reason: final?.reason ?? null,
    dispute: escalated
      ? {
          reason: escalationReason(r, asked, thresholds),
          judge_position: asked?.reason ?? null,
        }
      : null,
    decided_by: final?.decided_by ?? null,
    decisions: r.decisions.map((d) => ({ decision: d.decision, approver: d.approver, reason: d.reason ?? null })),
    seconds_to_decide: Number.isFinite(decidedAt) ? (decidedAt - Date.parse(r.started_at)) / 1000 : null,
    review_mark: mark
      ? { mark: mark.mark, should_be: mark.should_be ?? null, reviewer: mark.reviewer, note: mark.note ?? null }
      : null,
  };
}

/** Human decisions and grant uses among `records` (the approval-fatigue figure). */
function approvalsOf(records: readonly AuditRecord[]): Report['approvals'] {
  const grants = new Set<string>();
  let grantUses = 0;
  let humanDecisions = 0;
  for (const r of records) {
    humanDecisions += r.decisions.filter((d) => d.accepted).length;
    const by = r.verdict?.decided_by;
    if (by?.startsWith('grant:')) {
      grantUses += 1;
      grants.add(by);
    }
  }
  return { human_decisions: humanDecisions, grant_uses: grantUses, grants: grants.size };
}

/** Builds the report of one period (with the previous period of the same length for the change column). */
export function buildReport(input: ReportInput): Report {
  const { policy, range } = input;
  const thresholds = policy.spec.thresholds;
  const length = range.end - range.start;
  const previousRange = { start: range.start - length, end: range.start };
  const current = input.records.filter((r) => within(r, range));
  const previous = input.records.filter((r) => within(r, previousRange));
  const days = length / DAY_MS;
  const now = computeMetrics(current, thresholds, days, input.reviews.current);
  const before = computeMetrics(previous, thresholds, days, input.reviews.previous);
  const metrics: ReportMetric[] = METRIC_ORDER.map((name) => {
    const t = policy.spec.metrics[name];
    const m = now[name];
    const p = before[name].value;
    return {
      name,
      ...METRIC_LABELS[name],
      value: m.value,
      numerator: m.numerator,
      denominator: m.denominator,
      target: t.target,
      alert: t.alert,
      minSample: t.minSample ?? null,
      state: metricState(m, t),
      previous: p,
      change: m.value !== null && p !== null ? m.value - p : null,
    };
  });

  const incidents = current
    .filter((r) => r.verdict?.verdict === 'REJECT' || wasEscalated(r, thresholds))
    .sort((a, b) => (a.started_at < b.started_at ? -1 : 1))
    .map((r) => incidentOf(r, policy, input.review));

  const dayStarts: number[] = [];
  for (let t = Math.floor(range.start / DAY_MS) * DAY_MS; t < range.end; t += DAY_MS) dayStarts.push(t);
  const byDay = new Map<string, AuditRecord[]>(dayStarts.map((t) => [dayKey(t), []]));
  for (const r of current) byDay.get(dayKey(Date.parse(r.started_at)))?.push(r);
  const approvalByDay = [...byDay].map(([day, rs]) => {
    const js = rs.map((r) => proposalJudgement(r, thresholds)).filter((j) => j !== null && j !== 'CLARIFY');
    return {
      day,
      rate: js.length > 0 ? js.filter((j) => j === 'APPROVE').length / js.length : null,
      judged: js.length,
    };
  });
  const escalationsByDay = [...byDay].map(([day, rs]) => ({
    day,
    count: rs.filter((r) => wasEscalated(r, thresholds)).length,
  }));
  const latencyByTier = (['lightweight-approval', 'full-judge-review'] as const).map((tier) => {
    const xs = current
      .filter((r) => r.tier === tier)
      .map((r) => decisionLatencySeconds(r, thresholds))
      .filter((x): x is number => x !== null);
    return { tier, p50: percentile(xs, 50), p95: percentile(xs, 95), p99: percentile(xs, 99), n: xs.length };
  });

  const review = input.review;
  return {
    kind: input.kind,
    period: input.period,
    range: { start: new Date(range.start).toISOString(), end: new Date(range.end).toISOString() },
    previous_range: {
      start: new Date(previousRange.start).toISOString(),
      end: new Date(previousRange.end).toISOString(),
    },
    generated_at: new Date(input.now ?? Date.now()).toISOString(),
    policy: policy.metadata.name,
    proposals: current.length,
    approvals: approvalsOf(current),
    metrics,
    breached: metrics.filter((m) => m.state === 'breached').map((m) => m.name),
    incidents,
    review: review
      ? {
          review_id: review.review_id,
          state: review.state,
          in_review: review.in_review.length,
          marked: review.tally.marked,
          false_negative_rate: review.tally.false_negative_rate,
          false_approval_rate: review.tally.false_approval_rate,
        }
      : null,
    charts: { approvalByDay, latencyByTier, escalationsByDay },
  };
}

/** A metric value as people read it: a percentage, seconds, or a count per day. */
export function formatValue(unit: ReportMetric['unit'], v: number | null, name?: MetricName): string {
  if (v === null) return '–';
  if (unit === 'seconds') return v < 1 ? `${Math.round(v * 1000)} ms` : `${v.toFixed(2)} s`;
  if (unit === 'per-day') return `${v.toFixed(1)}/day`;
  if (name === 'clarifyCyclesPerApproval') return v.toFixed(2);
  return `${(v * 100).toFixed(1)} %`;
}

function bandText(m: ReportMetric, which: 'target' | 'alert'): string {
  const f = (v: number) => formatValue(m.unit, v, m.name);
  if (which === 'target') {
    const { min, max } = m.target;
    if (min !== undefined && max !== undefined) return `${f(min)}–${f(max)}`;
    if (min !== undefined) return `≥ ${f(min)}`;
    return max !== undefined ? `≤ ${f(max)}` : '–';
  }
  const parts = [];
  if (m.alert.below !== undefined) parts.push(`< ${f(m.alert.below)}`);
  if (m.alert.above !== undefined) parts.push(`> ${f(m.alert.above)}`);
  return parts.join(' or ');
}

/** The target band and alert thresholds as text (shared by Markdown and HTML). */
export function metricBands(m: ReportMetric): { target: string; alert: string } {
  return { target: bandText(m, 'target'), alert: bandText(m, 'alert') };
}

/** The change since the previous period, signed, in the metric's unit. */
export function formatChange(m: ReportMetric): string {
  if (m.change === null) return '–';
  const sign = m.change > 0 ? '+' : m.change < 0 ? '−' : '±';
  const abs = Math.abs(m.change);
  if (m.unit === 'ratio' && m.name !== 'clarifyCyclesPerApproval') return `${sign}${(abs * 100).toFixed(1)} pp`;
  return `${sign}${formatValue(m.unit, abs, m.name)}`;
}

/** The sample behind a metric, in words. */
export function sampleText(m: ReportMetric): string {
  if (m.unit === 'per-day') return `${m.numerator} in ${m.denominator.toFixed(0)} d`;
  if (m.unit === 'seconds') return `n=${m.denominator}`;
  return `${m.numerator}/${m.denominator}${m.minSample !== null ? ` (min ${m.minSample})` : ''}`;
}

/** A review's progress in one line (shared by Markdown and HTML). */
export function reviewLine(rv: ReviewProgress): string {
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  let line = `${rv.review_id} (${rv.state}): ${rv.marked} of ${rv.in_review} marked`;
  if (rv.false_negative_rate !== null) line += `; false negative rate ${pct(rv.false_negative_rate)}`;
  if (rv.false_approval_rate !== null) line += `; false approval rate ${pct(rv.false_approval_rate)}`;
  return line;
}

const cell = (s: string | null | undefined) => (s ?? '–').replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 300);

/** The report as Markdown. */
export function renderMarkdown(r: Report): string {
  const out: string[] = [];
  out.push(`# agent-judge ${r.kind} report: ${r.period}`, '');
  out.push(
    `${r.range.start} – ${r.range.end} · ${r.proposals} proposals · policy ${r.policy} · generated ${r.generated_at}`,
    '',
    `Approvals by people: ${r.approvals.human_decisions} decisions; by scoped grants: ${r.approvals.grant_uses} ` +
      `proposals through ${r.approvals.grants} grants.`,
    '',
  );
  out.push(
    r.breached.length > 0
      ? `**Thresholds breached:** ${r.breached.map((n) => METRIC_LABELS[n].label).join(', ')}`
      : 'No alert threshold breached.',
    '',
  );
  out.push(
    '## Metrics',
    '',
    '| metric | value | sample | target | alert | state | change |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  for (const m of r.metrics) {
    const b = metricBands(m);
    const value = formatValue(m.unit, m.value, m.name);
    out.push(row([m.label, value, sampleText(m), b.target, b.alert, m.state, formatChange(m)]));
  }
  out.push('', '## Review', '', r.review ? reviewLine(r.review) : 'No review for this period.');
  out.push('', `## REJECTs and escalations (${r.incidents.length})`, '');
  if (r.incidents.length > 0) {
    const head = ['started', 'proposal', 'action', 'verdict', 'rule', 'reason', 'dispute', 'decided by'];
    head.push('decisions', 'time to decide', 'review');
    out.push(row(head), row(head.map(() => '---')));
    for (const i of r.incidents) {
      const decisions = i.decisions.map((d) => `${d.approver}: ${d.decision}${d.reason ? ` (${d.reason})` : ''}`);
      out.push(
        row([
          i.started_at,
          cell(i.proposal_id),
          cell(i.action_type),
          cell(i.verdict ?? i.status) + (i.escalated ? ' (escalated)' : ''),
          cell(i.rule),
          cell(i.reason),
          cell(i.dispute ? `${i.dispute.reason}; judge: ${i.dispute.judge_position ?? '–'}` : null),
          cell(i.decided_by),
          cell(decisions.join('; ') || null),
          i.seconds_to_decide === null ? '–' : `${i.seconds_to_decide.toFixed(1)} s`,
          cell(i.review_mark ? `${i.review_mark.mark} by ${i.review_mark.reviewer}` : null),
        ]),
      );
    }
  }
  return `${out.join('\n')}\n`;
}

/**
 * The review figures for one range: closed weekly reviews (REJECTs) and closed spot-checks (APPROVEs) whose period
 * overlaps it. Null when no closed review does.
 */
export function reviewCounts(
  memos: ReadonlyArray<ReviewMemo | null>,
  range: { start: number; end: number },
): ReviewCounts | null {
  const counts = { rejectsMarked: 0, rejectsWrong: 0, approvesMarked: 0, approvesWrong: 0 };
  let any = false;
  for (const m of memos) {
    if (!m || m.state !== 'closed') continue;
    const p = periodRange(m.kind, m.period);
    if (p.end <= range.start || p.start >= range.end) continue;
    any = true;
    if (m.kind === 'weekly') {
      counts.rejectsMarked += m.rejects_marked;
      counts.rejectsWrong += m.rejects_wrong;
    } else {
      counts.approvesMarked += m.approves_marked;
      counts.approvesWrong += m.approves_wrong;
    }
  }
  return any ? counts : null;
}
