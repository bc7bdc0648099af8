/**
 * Counting where events happen, from workflow code, with the SDK's workflow meter: it writes nothing
 * to history and is skipped while a workflow replays, so each event counts once however often the
 * history is replayed (cache eviction, a worker restart). Label values come from the closed sets of
 * the metric catalogue only. The worker's meter adds `namespace`, `taskQueue` and `workflowType`.
 */
import { metricMeter, workflowInfo } from '@temporalio/workflow';
import type { MetricCounter, MetricHistogram } from '@temporalio/common';
import {
  actionTypeLabel,
  decidedByLabel,
  earlierVerdictLabel,
  escalationReasonOf,
  executorLabel,
  isJudgedTier,
  meterName,
  METRICS,
} from './schemas';
import type { JudgedLabel, ReviewKind } from '../contracts/metric-catalogue';
import type { CompliancePolicy } from '../contracts/policy';
import type { ExecutionResult, OutcomeStatus } from '../contracts/status';
import type { Tier, Verdict } from '../contracts/verdict';

// Created lazily: the meter may only be used inside a workflow context, not at module load.
let counters: Record<string, MetricCounter> | undefined;
let latency: MetricHistogram | undefined;
const counter = (def: { name: string; kind: 'counter'; help: string }): MetricCounter => {
  counters ??= {};
  return (counters[def.name] ??= metricMeter.createCounter(meterName(def), undefined, def.help));
};

/** The metrics of one proposal run: every method counts one event of that proposal. */
export class ProposalMetrics {
  private latencyRecorded = false;
  private escalatedFrom: Verdict | null = null;

  constructor(
    private readonly policy: CompliancePolicy,
    private readonly tier: Tier,
    private readonly actionType: string,
  ) {}

  /** Every verdict recorded (judge rounds, human and timeout verdicts included). */
  verdict(v: Verdict): void {
    counter(METRICS.verdicts).add(1, {
      tier: this.tier,
      verdict: v.verdict,
      decided_by: decidedByLabel(v.decided_by),
    });
  }

  /** The proposal's judging came to this (once per proposal; judged tiers only). */
  judged(outcome: JudgedLabel): void {
    if (!isJudgedTier(this.tier)) return;
    counter(METRICS.judged).add(1, { tier: this.tier, verdict: outcome });
  }

  /** The first final or escalating verdict: decision latency in workflow time (once per proposal). */
  decided(): void {
    if (this.latencyRecorded) return;
    this.latencyRecorded = true;
    const seconds = Math.max(0, (Date.now() - workflowInfo().startTime.getTime()) / 1000);
    latency ??= metricMeter.createHistogram(
      METRICS.decisionLatency.name,
      'float',
      undefined,
      METRICS.decisionLatency.help,
    );
    latency.record(seconds, { tier: this.tier });
  }

  clarifyRequested(): void {
    counter(METRICS.clarifyRequests).add(1, { tier: this.tier });
  }

  /** Sent to a person; `v` is the verdict that escalated it (null for the human-only tier). */
  escalated(v: Verdict | null): void {
    this.escalatedFrom = v;
    counter(METRICS.escalations).add(1, {
      tier: this.tier,
      reason: escalationReasonOf(v, this.policy.spec.thresholds.human),
    });
  }

  /** One approver's accepted decision, against what the judge said before (never the approver id). */
  /** A grant approved the proposal (once per proposal). */
  grantUsed(): void {
    counter(METRICS.grantUses).add(1, { tier: this.tier });
  }

  humanDecision(decision: 'approve' | 'reject'): void {
    counter(METRICS.humanDecisions).add(1, {
      tier: this.tier,
      decision,
      judge_verdict: earlierVerdictLabel(this.escalatedFrom),
    });
  }

  executed(result: ExecutionResult): void {
    if (result.executor === 'none') return;
    counter(METRICS.executions).add(1, { executor: executorLabel(result.executor), status: result.status });
  }

  /** The run finished: its status and the verdict it ended with. */
  closed(status: OutcomeStatus, last: Verdict | null): void {
    const listed = this.policy.spec.riskMatrix.map((e) => e.actionType);
    counter(METRICS.closed).add(1, {
      tier: this.tier,
      status,
      action_type: actionTypeLabel(this.actionType, listed),
    });
    if (last) {
      counter(METRICS.finalVerdicts).add(1, {
        tier: this.tier,
        verdict: last.verdict,
        decided_by: decidedByLabel(last.decided_by),
      });
    }
  }
}

/**
 * For the reviews workflow (issue 11, audit cadence): call once when a review closes, from workflow
 * code, with the marks it holds. Feeds falseNegativeRate (weekly REJECTs) and falseApprovalRate
 * (spot-checked APPROVEs); replays do not count again.
 */
export function countClosedReview(
  review: ReviewKind,
  marks: ReadonlyArray<{ verdict: 'APPROVE' | 'REJECT'; mark: 'correct' | 'wrong' }>,
): void {
  for (const m of marks) counter(METRICS.reviewMarks).add(1, { review, verdict: m.verdict, mark: m.mark });
  metricMeter
    .createGauge(METRICS.reviewLastClosed.name, 'int', undefined, METRICS.reviewLastClosed.help)
    .set(Math.floor(Date.now() / 1000), { review });
}
