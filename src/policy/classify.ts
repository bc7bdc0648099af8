import type { CompliancePolicy } from '../contracts/policy';
import type { Tier } from '../contracts/verdict';

/**
 * The autonomy tier for an action type (seed 000 §2). Types the matrix does not list get the
 * policy's default tier, which the schema forbids from being no-judge: unknown never passes.
 * Pure: workflow code calls it.
 */
export function tierFor(policy: CompliancePolicy, actionType: string): Tier {
  const entry = policy.spec.riskMatrix.find((e) => e.actionType === actionType);
  return entry ? entry.tier : policy.spec.defaultTier;
}

export function isShadow(policy: CompliancePolicy, actionType: string): boolean {
  return policy.spec.shadow.includes(actionType);
}

/** Approvals needed before an escalated proposal of this tier executes. */
export function quorumFor(policy: CompliancePolicy, tier: Tier): number {
  return policy.spec.escalation.quorum[tier] ?? 1;
}
