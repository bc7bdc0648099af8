import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { Tier, Verdict } from '../contracts/verdict';
import { judgeByRules } from './rules';

/** What the judge activity receives: the proposal as it stands, and the policy snapshot in force. */
export interface JudgeInput {
  proposal: Proposal;
  tier: Tier;
  /** 0 for the first judgement, then one more per clarification. */
  round: number;
  policy: CompliancePolicy;
}

/** What the judge process holds: no executor credentials, only what judging needs. */
export interface JudgeDeps {
  /** Directory relative paths resolve against. */
  baseDir: string;
  now?: () => Date;
}

/**
 * The full judge for full-judge-review proposals. Here: the deterministic rules layer. The
 * model-backed layer (issue 3) sits behind this same function, after the rules, and may only
 * tighten what the rules allow.
 */
export async function judgeProposal(input: JudgeInput, deps: JudgeDeps): Promise<Verdict> {
  const finding = judgeByRules(input.proposal, { policy: input.policy, baseDir: deps.baseDir });
  const constraints = {
    require_human_review: false,
    ...(input.proposal.scope_claim.files_only ? { files_only: input.proposal.scope_claim.files_only } : {}),
    ...(input.proposal.scope_claim.max_lines !== undefined ? { max_lines: input.proposal.scope_claim.max_lines } : {}),
    ...(input.proposal.scope_claim.no_existing_code_deletion !== undefined
      ? { no_existing_code_deletion: input.proposal.scope_claim.no_existing_code_deletion }
      : {}),
  };
  return {
    proposal_id: input.proposal.proposal_id,
    verdict: finding.verdict,
    reason: finding.reason,
    constraints,
    escalation: null,
    confidence: 1,
    decided_by: 'rules',
    tier: input.tier,
    rule: finding.rule,
    decided_at: (deps.now?.() ?? new Date()).toISOString(),
  };
}
