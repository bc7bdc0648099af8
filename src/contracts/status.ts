import type { Proposal } from './proposal';
import type { Dispute, Tier, Verdict } from './verdict';
import type { HumanDecision } from './messages';
import type { ExecutionStatus, OutcomeStatus, Stage } from './lifecycle';
import type { CapabilityRecord, CapabilityRedemption } from './capability';
import type { CallerRecord } from './caller-outcome';
import type { ActionEdited, EditedRecord } from './action-edit';
import { proposalSubject } from './subject';

export type { ExecutionStatus, OutcomeStatus, Stage } from './lifecycle';
export { FINAL_STAGES, SETTLED_STAGES, UNCERTAIN_EXPLANATION } from './lifecycle';

/** What an executor did. `not_executed` means no executor exists here: the caller acts. */
export interface ExecutionResult {
  status: ExecutionStatus;
  executor: string;
  output?: unknown;
  error?: string;
  shadow: boolean;
  started_at: string;
  finished_at: string;
}

export interface DecisionRecord extends HumanDecision {
  at: string;
}

/**
 * What a proposal's run has recorded so far, beside {@link DecisionRecord}, `CallerRecord` and `CapabilityRecord`: the
 * `status` Query's answer, and what the proposal's Updates return. Its `status` field is the outcome status.
 */
export interface ProposalRecord {
  proposal_id: string;
  workflow_id: string;
  status: OutcomeStatus;
  stage: Stage;
  tier: Tier;
  shadow: boolean;
  proposal: Proposal;
  verdict: Verdict | null;
  verdicts: Verdict[];
  clarify_rounds: number;
  max_clarify_rounds: number;
  deadlines: { clarification: string | null; human: string | null };
  dispute: Dispute | null;
  decisions: DecisionRecord[];
  approvals_needed: number;
  /**
   * Who may decide: the approvers this run was started with (its policy snapshot). Absent from a record written
   * before it was added; the `humanDecision` Update checks it with `refuseDecider` (contracts/decider.ts).
   */
  approvers?: readonly string[];
  execution: ExecutionResult | null;
  /** Set for proposals their caller performs (the MCP proxy, a gate): what it reported. Absent for any other. */
  caller?: CallerRecord | null;
  audit_flag: boolean;
  /** The policy's `metadata.name`. */
  policy: string;
  /**
   * SHA-256 of the policy this proposal was judged under, as its policy snapshot recorded it (the same digest its
   * capability token binds and the workers publish: docs/policy.md).
   */
  policy_sha256: string;
  /** The approved action's capability token; null until one is issued (never, for a refused proposal). */
  capability: CapabilityRecord | null;
  /**
   * Set once a person approved with edits (docs/edits.md): the edited action, what is performed. `proposal` stays the
   * proposal as submitted, so the status shows both.
   */
  edited?: EditedRecord;
}

/**
 * The token in an outcome, for an action the caller performs itself (no executor here): the caller
 * redeems it (`redeemCapability`, `agent-judge capability verify --redeem`) before acting.
 */
export interface OutcomeCapability {
  token: string;
  token_id: string;
  audience: string;
  expires_at: string;
  redemption: CapabilityRedemption | null;
  expired_at: string | null;
}

/** The outcome JSON the CLI prints for propose --wait, status, clarify and decide. */
export interface ProposalOutcome {
  proposal_id: string;
  workflow_id: string;
  status: OutcomeStatus;
  verdict: Verdict | null;
  verdicts: Verdict[];
  execution: ExecutionResult | null;
  /** Present when the caller performs the approved action itself: the token it must redeem first. */
  capability?: OutcomeCapability;
  /** What the caller reported, for proposals the caller performs (see {@link ProposalRecord.caller}). */
  caller?: CallerRecord | null;
  /** The digest of the policy it was judged under (see {@link ProposalRecord.policy_sha256}). */
  policy_sha256?: string;
  /**
   * Set when a person approved with edits: what changed, and the edited action (type, target, parameters) that is
   * performed instead of the proposal as submitted. A caller that performs the action performs exactly this one.
   */
  edited?: ActionEdited & { action: { action_type: string; target: unknown; parameters: unknown } };
  /** The command, path or URL an approver is asked about (src/contracts/subject.ts). */
  subject?: string;
  /** While a person must decide (`awaiting_human`): why it came to a person, as the dispute says it. */
  escalation_reason?: string;
}

export function outcomeOf(s: ProposalRecord): ProposalOutcome {
  const c = s.capability;
  return {
    proposal_id: s.proposal_id,
    workflow_id: s.workflow_id,
    status: s.status,
    subject: proposalSubject(s.proposal),
    verdict: s.verdict,
    verdicts: s.verdicts,
    execution: s.execution,
    ...(c && !c.executed_by_agent_judge
      ? {
          capability: {
            token: c.token,
            token_id: c.token_id,
            audience: c.audience,
            expires_at: c.expires_at,
            redemption: c.redemption,
            expired_at: c.expired_at,
          },
        }
      : {}),
    ...(s.caller ? { caller: s.caller } : {}),
    policy_sha256: s.policy_sha256,
    ...(s.status === 'awaiting_human' && s.dispute ? { escalation_reason: s.dispute.reason } : {}),
    ...(s.edited
      ? {
          edited: {
            from_digest: s.edited.from_digest,
            to_digest: s.edited.to_digest,
            changes: s.edited.changes,
            action: {
              action_type: s.edited.proposal.action_type,
              target: s.edited.proposal.target,
              parameters: s.edited.proposal.parameters,
            },
          },
        }
      : {}),
  };
}
