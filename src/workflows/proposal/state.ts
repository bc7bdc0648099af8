/**
 * The proposal workflow's state and decisions (the safe-message-handlers pattern): the workflow function registers
 * handlers, runs activities and waits; {@link ProposalState} decides. No Temporal calls, no I/O, no clock of its own
 * (callers pass workflow time), plain JSON fields written only by its own methods: it is unit-tested without a server.
 * Its layers, one concept per file: core.ts, escalation.ts, caller-window.ts, capability.ts; this file adds the
 * withdrawal of a taken proposal_id and the record it shows (`toRecord()`).
 */
import type { CallerRecord } from '../../contracts/caller-outcome';
import { refusal, type Refusal } from '../../contracts/refusal';
import type { ExecutionResult, ProposalRecord } from '../../contracts/status';
import type { Verdict } from '../../contracts/verdict';
import { PROPOSAL_ID_TAKEN_RULE, workflowIdNamedBy } from '../../contracts/workflow-ids';
import { policyDigest } from '../schemas';
import { CapabilityState } from './capability';

export type { NextStep } from './core';
export { capabilityBinding } from './capability';

/**
 * Why a run submitted under `proposalId` cannot be withdrawn: a proposal_id that names its content is never held by
 * other content, and an action already performed stays on the record as performed.
 */
export function refuseWithdrawalOf(
  proposalId: string,
  execution: ExecutionResult | null = null,
  caller: CallerRecord | null = null,
): Refusal | null {
  if (workflowIdNamedBy(proposalId) !== null)
    return refusal(
      'withdraw.content-named',
      `proposal_id ${proposalId} names this proposal's content: it is never held by another`,
    );
  if (execution?.status === 'succeeded' || caller?.outcome === 'ok' || caller?.outcome === 'unknown')
    return refusal('withdraw.performed', 'the approved action was already performed');
  return null;
}

export class ProposalState extends CapabilityState {
  // --- a chosen proposal_id held by other content --------------------------------------------

  /**
   * Why this run cannot be withdrawn for a taken proposal_id, or null. Only a chosen proposal_id is reserved apart
   * from the run (`reserveProposalId` in src/client/proposals/reservation.ts); one that names its content is unique by
   * its workflow id and never taken by other content.
   */
  refuseWithdrawal(): Refusal | null {
    return refuseWithdrawalOf(this._proposal.proposal_id, this._execution, this._caller);
  }

  /**
   * The proposal_id this run was submitted under is held by other content (the submitting client or the executor
   * found out): the run ends refused, whatever it was doing. Its token, if one was issued, can never be redeemed.
   */
  withdraw(reason: string, now: string): Verdict {
    this._deadlines = { clarification: null, human: null };
    this._pendingClarification = null;
    if (this._capability && !this._capability.redemption) this._capability.expired_at = now;
    return this.recordVerdict(
      this.verdict('REJECT', reason, 'policy', now, { rule: PROPOSAL_ID_TAKEN_RULE, confidence: 1 }),
      now,
    );
  }

  // --- reporting ------------------------------------------------------------------------------

  /** The proposal as the status Query, the Updates and the result show it ({@link ProposalRecord}). */
  toRecord(): ProposalRecord {
    return {
      proposal_id: this._proposal.proposal_id,
      workflow_id: this.workflowId,
      status: this.status(),
      stage: this._stage,
      tier: this.tier,
      shadow: this.shadow,
      proposal: this._proposal,
      verdict: this.latest,
      verdicts: this._verdicts,
      clarify_rounds: this._clarifyRounds,
      max_clarify_rounds: this.policy.spec.clarify.maxRounds,
      deadlines: this._deadlines,
      dispute: this._dispute,
      decisions: this._decisions,
      approvals_needed: this.approvalsNeeded,
      approvers: this.policy.spec.escalation.approvers,
      execution: this._execution,
      ...(this.performedByCaller ? { caller: this._caller } : {}),
      audit_flag: this._auditFlag,
      policy: this.policy.metadata.name,
      policy_sha256: this.policySha256 ?? policyDigest(this.policy),
      capability: this._capability,
      ...(this._edited ? { edited: this._edited } : {}),
    };
  }
}
