import { routeVerdict } from '../contracts/lifecycle';
import type { CompliancePolicy } from '../contracts/policy';
import { durationMs } from '../contracts/duration';
import type { Proposal } from '../contracts/proposal';
import type { Tier } from '../contracts/verdict';
import { lightweightCheck } from './patterns';

/**
 * The autonomy tier for an action type (seed 000 §2). Types the matrix does not list get the
 * policy's default tier, which the schema forbids from being no-judge: unknown never passes.
 * Pure: workflow code calls it.
 */
export function tierFor(policy: CompliancePolicy, actionType: string): Tier {
  const entry = policy.spec.riskMatrix.find((e) => e.actionType === actionType);
  return entry ? entry.tier : policy.spec.defaultTier;
}

/**
 * The tier a proposal is decided at: its action type's, raised to full-judge-review when the proposal carries taints
 * (values from untrusted content in a consequential call, docs/provenance.md): such a call never passes on the policy
 * or its patterns alone. Pure: workflow code calls it.
 */
export function proposalTier(policy: CompliancePolicy, proposal: Pick<Proposal, 'action_type' | 'provenance'>): Tier {
  const tier = tierFor(policy, proposal.action_type);
  const tainted = (proposal.provenance?.taints.length ?? 0) > 0;
  return tainted && (tier === 'no-judge' || tier === 'lightweight-approval') ? 'full-judge-review' : tier;
}

export function isShadow(policy: CompliancePolicy, actionType: string): boolean {
  return policy.spec.shadow.includes(actionType);
}

/** Approvals needed before an escalated proposal of this tier executes. */
export function quorumFor(policy: CompliancePolicy, tier: Tier): number {
  return policy.spec.escalation.quorum[tier] ?? 1;
}

/** How long an approved action's capability token lives (`spec.capabilities.ttl`, default 10 minutes). */
export function capabilityTtlMs(policy: CompliancePolicy): number {
  return durationMs(policy.spec.capabilities?.ttl ?? '10m');
}

/**
 * True when the policy alone sends this proposal to execution at its first judgement, before any judge or person:
 * the no-judge tier, or a lightweight proposal that no deny pattern or topic rule refuses; in shadow mode, either
 * tier whatever its verdict. The workflow decides exactly so (ProposalState's noJudgeVerdict or patternVerdict, then
 * nextStep: test/unit/policy-alone.test.ts holds the two together). The workflow worker's policy snapshot signs the
 * capability token of such a proposal in the same local activity, so the run needs no second one.
 */
export function executesOnPolicyAlone(policy: CompliancePolicy, proposal: Proposal): boolean {
  const tier = proposalTier(policy, proposal);
  if (tier !== 'no-judge' && tier !== 'lightweight-approval') return false;
  if (isShadow(policy, proposal.action_type)) return true;
  const verdict = tier === 'no-judge' ? 'APPROVE' : lightweightCheck(proposal, policy).verdict;
  // The policy's verdicts are certain (confidence 1) and ask for no person: routed as the workflow routes them.
  const policyVerdict = { verdict, confidence: 1, constraints: { require_human_review: false }, escalation: null };
  return routeVerdict(policyVerdict, policy.spec.thresholds) === 'execute';
}
