/**
 * The report's metric arithmetic against a fixture whose numbers are worked out by hand (thresholds of the
 * default policy: a person below confidence 0.3, CLARIFY below 0.6).
 */
import { describe, expect, it } from 'vitest';
import { computeMetrics, metricState, proposalJudgement, wasEscalated } from '../../src/audit/metrics';
import { buildReport, renderMarkdown, reviewCounts } from '../../src/audit/report';
import { defaultPolicyWith } from '../../src/policy/load';
import { healthyFixture, metricsFixture } from '../helpers/report-fixture';

const policy = defaultPolicyWith({});
const th = policy.spec.thresholds;
const BASE = Date.parse('2026-11-23T00:00:00.000Z');
const DAY = 86_400_000;
const records = metricsFixture(BASE);
const inWindow = records.filter((r) => Date.parse(r.started_at) >= BASE);

describe('metric definitions on the hand-worked fixture', () => {
  it('classifies each proposal by its last judge verdict that is not CLARIFY', () => {
    // R1 A, R2 R, R3 (CLARIFY then A) A, R4 (A needing review) ESCALATE, R5 (R at 0.2) ESCALATE,
    // R6 (CLARIFY at 0) ESCALATE, R7 human-only: none, R8 policy: none, R9 A, R10 R, R11 (A at 0.2) ESCALATE.
    expect(inWindow.map((r) => proposalJudgement(r, th))).toEqual([
      'APPROVE',
      'REJECT',
      'APPROVE',
      'ESCALATE',
      'ESCALATE',
      'ESCALATE',
      null,
      null,
      'APPROVE',
      'REJECT',
      'ESCALATE',
    ]);
    // Sent to a person: R4, R5, R6 (the timeout followed the escalation), R7 (human-only). Not R11 (shadow: its
    // escalating verdict is its last, it executed regardless).
    expect(inWindow.filter((r) => wasEscalated(r, th)).map((r) => r.workflow_id.slice(-2))).toEqual([
      '04',
      '05',
      '06',
      '07',
    ]);
  });

  it('computes the seven metrics (plus the false-approval rate) exactly', () => {
    const m = computeMetrics(inWindow, th, 2, {
      rejectsMarked: 4,
      rejectsWrong: 1,
      approvesMarked: 2,
      approvesWrong: 0,
    });
    // approvalRate: judge APPROVE {R1,R3,R9} = 3 of judged {R1,R2,R3,R4,R5,R6,R9,R10,R11} = 9 -> 3/9.
    expect(m.approvalRate).toEqual({ value: 3 / 9, numerator: 3, denominator: 9 });
    // humanOverrideRate: decisions on proposals the judge saw: R4 approve after APPROVE (no), R5 approve after
    // REJECT (yes) -> 1/2. R7's decision is on a proposal no judge saw: not counted.
    expect(m.humanOverrideRate).toEqual({ value: 1 / 2, numerator: 1, denominator: 2 });
    // From the reviews: 1 of 4 REJECTs wrong; 0 of 2 APPROVEs wrong.
    expect(m.falseNegativeRate.value).toBe(0.25);
    expect(m.falseApprovalRate.value).toBe(0);
    // Lightweight latencies [0.05, 0.08]: nearest rank ceil(0.95*2) = 2nd -> 0.08 s.
    expect(m.lightweightLatencyP95Seconds.value).toBeCloseTo(0.08, 6);
    expect(m.lightweightLatencyP95Seconds.denominator).toBe(2);
    // Full review, start -> first non-CLARIFY judge verdict: R3 61, R4 2, R5 3, R6 4, R9 1.5, R10 20, R11 0.5;
    // sorted [0.5, 1.5, 2, 3, 4, 20, 61], rank ceil(0.95*7) = 7 -> 61 s.
    expect(m.fullJudgeLatencyP95Seconds.value).toBe(61);
    expect(m.fullJudgeLatencyP95Seconds.denominator).toBe(7);
    // CLARIFY verdicts routed to the actor: R3 1, R10 2 (R6's CLARIFY at confidence 0 went to a person) = 3;
    // final APPROVEs (any decider): R1, R3, R4, R5, R8, R9, R11 = 7 -> 3/7.
    expect(m.clarifyCyclesPerApproval).toEqual({ value: 3 / 7, numerator: 3, denominator: 7 });
    // 4 escalations in 2 days -> 2 per day.
    expect(m.escalationsPerDay).toEqual({ value: 2, numerator: 4, denominator: 2 });
  });

  it('states: a ratio under minSample is not alerted on; a latency past its threshold is', () => {
    const m = computeMetrics(inWindow, th, 2, null);
    // 3/9 is below the 50 % alert, but 9 < minSample 20.
    expect(metricState(m.approvalRate, policy.spec.metrics.approvalRate)).toBe('insufficient-sample');
    expect(metricState(m.fullJudgeLatencyP95Seconds, policy.spec.metrics.fullJudgeLatencyP95Seconds)).toBe('breached');
    expect(metricState(m.lightweightLatencyP95Seconds, policy.spec.metrics.lightweightLatencyP95Seconds)).toBe('ok');
    // 2/day is within the target (< 3).
    expect(metricState(m.escalationsPerDay, policy.spec.metrics.escalationsPerDay)).toBe('ok');
    expect(metricState(m.falseNegativeRate, policy.spec.metrics.falseNegativeRate)).toBe('no-data');
    // With enough events the same ratio breaches: 10 of 40 approvals = 25 % < 50 %.
    expect(metricState({ value: 0.25, numerator: 10, denominator: 40 }, policy.spec.metrics.approvalRate)).toBe(
      'breached',
    );
  });

  it('builds the report: incidents, change since the previous period, breached list', () => {
    const report = buildReport({
      kind: 'summary',
      period: 'fixture',
      range: { start: BASE, end: BASE + 2 * DAY },
      records,
      policy,
      reviews: { current: null, previous: null },
      review: null,
      now: BASE + 2 * DAY,
    });
    expect(report.proposals).toBe(11);
    // Every REJECT and every escalation: R2, R4, R5, R6, R7, R10.
    expect(report.incidents.map((i) => i.workflow_id.slice(-2))).toEqual(['02', '04', '05', '06', '07', '10']);
    const r2 = report.incidents[0]!;
    expect(r2).toMatchObject({ rule: 'lightweight.deny.secrets', decided_by: 'rules', escalated: false });
    expect(r2.seconds_to_decide).toBeCloseTo(0.08, 6);
    const r5 = report.incidents[2]!;
    expect(r5).toMatchObject({
      escalated: true,
      decided_by: 'human:alice',
      decisions: [expect.objectContaining({ approver: 'alice' })],
    });
    expect(r5.dispute?.judge_position).toBe('REJECT by judge');
    // Previous period: R12 alone, a lightweight APPROVE of 0.04 s -> change +0.04 s.
    const lw = report.metrics.find((m) => m.name === 'lightweightLatencyP95Seconds')!;
    expect(lw.previous).toBeCloseTo(0.04, 6);
    expect(lw.change).toBeCloseTo(0.04, 6);
    expect(report.breached).toEqual(['fullJudgeLatencyP95Seconds']);
    const md = renderMarkdown(report);
    expect(md).toContain('| Latency p95: full judge review | 61.00 s | n=7 | ≤ 2.00 s | > 5.00 s | breached |');
    expect(md).toContain('**Thresholds breached:** Latency p95: full judge review');
  });

  it('a healthy day breaches nothing', () => {
    const report = buildReport({
      kind: 'summary',
      period: 'healthy',
      range: { start: BASE, end: BASE + DAY },
      records: healthyFixture(BASE),
      policy,
      reviews: { current: null, previous: null },
      review: null,
    });
    expect(report.breached).toEqual([]);
  });

  it('review counts come from closed reviews whose period overlaps the range', () => {
    const memo = (kind: 'weekly' | 'spot-check', period: string, state: 'open' | 'closed', rm: number, rw: number) => ({
      kind,
      period,
      state,
      in_review: 10,
      marked: rm,
      closed_at: null,
      rejects_marked: kind === 'weekly' ? rm : 0,
      rejects_wrong: kind === 'weekly' ? rw : 0,
      approves_marked: kind === 'spot-check' ? rm : 0,
      approves_wrong: kind === 'spot-check' ? rw : 0,
      false_negative_rate: null,
      false_approval_rate: null,
    });
    const memos = [
      memo('weekly', '2026-W48', 'closed', 4, 1), // Nov 23-29: overlaps
      memo('weekly', '2026-W47', 'closed', 5, 5), // Nov 16-22: before the range
      memo('weekly', '2026-W49', 'open', 3, 3), // open: not counted
      memo('spot-check', '2026-11', 'closed', 2, 1),
    ];
    expect(reviewCounts(memos, { start: BASE, end: BASE + 2 * DAY })).toEqual({
      rejectsMarked: 4,
      rejectsWrong: 1,
      approvesMarked: 2,
      approvesWrong: 1,
    });
  });
});
