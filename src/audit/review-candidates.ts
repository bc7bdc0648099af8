/**
 * What a review covers, read through `audit export` (exportAudit): the review workflow records these candidates,
 * and `review status --verify` compares them with a fresh export.
 */
import type { Client } from '@temporalio/client';
import type { CompliancePolicy } from '../contracts/policy';
import { periodRange, type ReviewCandidate, type ReviewKind } from '../contracts/review';
import { exportAudit, type AuditRecord } from './index';
import { wasEscalated } from './metrics';

/** One exported proposal as a review candidate. */
export function candidateOf(r: AuditRecord, thresholds: CompliancePolicy['spec']['thresholds']): ReviewCandidate {
  return {
    workflow_id: r.workflow_id,
    proposal_id: r.proposal_id,
    verdict: r.verdict?.verdict ?? null,
    decided_by: r.verdict?.decided_by ?? null,
    escalated: wasEscalated(r, thresholds),
    tier: r.tier,
    action_type: r.action_type,
    started_at: r.started_at,
  };
}

/** Every proposal started in the period, from `audit export`, as candidates (the review keeps those that belong). */
export async function gatherCandidates(
  client: Client,
  kind: ReviewKind,
  period: string,
  policy: CompliancePolicy,
  nowMs = Date.now(),
): Promise<ReviewCandidate[]> {
  const range = periodRange(kind, period);
  const out: ReviewCandidate[] = [];
  for await (const r of exportAudit(client, { sinceMs: Math.max(0, nowMs - range.start) + 1000 })) {
    const t = Date.parse(r.started_at);
    if (t >= range.start && t < range.end) out.push(candidateOf(r, policy.spec.thresholds));
  }
  return out;
}
