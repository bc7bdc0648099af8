/**
 * The proposal workflow's state and decisions, as a small class with pure methods (the
 * safe-message-handlers pattern): the workflow function registers handlers and waits; this class
 * decides. No Temporal, no I/O, plain JSON fields: it is unit-tested without a server.
 */
import type { Clarification, HumanDecision } from '../contracts/messages';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { DecisionRecord, ExecutionResult, OutcomeStatus, ProposalStatus, Stage } from '../contracts/status';
import type { Dispute, Tier, Verdict } from '../contracts/verdict';
import { withinScope } from '../contracts/repo-path';
import { refuseDecisionSignature } from '../identity/decision';

/** What the workflow does after a verdict. */
export type NextStep = 'execute' | 'reject' | 'clarify' | 'escalate';

export class ProposalState {
  stage: Stage = 'judging';
  verdicts: Verdict[] = [];
  clarifyRounds = 0;
  deadlines: { clarification: string | null; human: string | null } = { clarification: null, human: null };
  dispute: Dispute | null = null;
  decisions: DecisionRecord[] = [];
  execution: ExecutionResult | null = null;
  auditFlag = false;
  pendingClarification: Clarification | null = null;
  /** Bumped each time the workflow reaches a settled stage, so Update handlers know "after". */
  settledCount = 0;

  constructor(
    public proposal: Proposal,
    readonly policy: CompliancePolicy,
    readonly workflowId: string,
    readonly tier: Tier,
    readonly shadow: boolean,
    readonly approvalsNeeded: number,
  ) {}

  get latest(): Verdict | null {
    return this.verdicts[this.verdicts.length - 1] ?? null;
  }

  setStage(stage: Stage): void {
    this.stage = stage;
    if (['awaiting_clarification', 'awaiting_human', 'executed', 'approved', 'rejected', 'failed'].includes(stage)) {
      this.settledCount += 1;
    }
  }

  /**
   * Seed 000 §3.3: confidence below the human threshold goes to a person, below the clarify
   * threshold becomes CLARIFY; a CLARIFY past the round limit is a REJECT.
   */
  route(v: Verdict): NextStep {
    const { thresholds } = this.policy.spec;
    if (v.confidence < thresholds.human) return 'escalate';
    if (v.verdict === 'REJECT') return 'reject';
    if (v.verdict === 'CLARIFY' || v.confidence < thresholds.clarify) return 'clarify';
    if (v.constraints.require_human_review || v.escalation) return 'escalate';
    return 'execute';
  }

  /** True when another CLARIFY round is still allowed. */
  canClarify(): boolean {
    return this.clarifyRounds < this.policy.spec.clarify.maxRounds;
  }

  /** Why a clarification cannot be accepted now, or null. Used by the Update validator. */
  refuseClarification(c: Clarification): string | null {
    if (this.stage !== 'awaiting_clarification') {
      return `proposal ${this.proposal.proposal_id} is not awaiting clarification (stage: ${this.stage})`;
    }
    if (this.pendingClarification) return 'a clarification is already being judged';
    const before = this.proposal.scope_claim;
    const after = c.scope_claim;
    // A field left out keeps its earlier value (applyClarification merges); a field given may only narrow.
    if (after) {
      if (before.max_lines !== undefined && after.max_lines !== undefined && after.max_lines > before.max_lines) {
        return `scope_claim.max_lines may only narrow (was ${before.max_lines})`;
      }
      if (before.files_only && after.files_only) {
        // Normalised first: `src/schema/../auth/` must not pass as inside `src/schema/`.
        const wider = after.files_only.filter((f) => !withinScope(f, before.files_only!));
        if (wider.length > 0)
          return `scope_claim.files_only may only narrow; not within the earlier scope: ${wider.join(', ')}`;
      }
      if (before.no_existing_code_deletion === true && after.no_existing_code_deletion === false) {
        return 'scope_claim.no_existing_code_deletion may not be dropped';
      }
    }
    return null;
  }

  /** The proposal as the actor clarified it: evidence added, scope narrowed, justification replaced. */
  applyClarification(c: Clarification): void {
    this.proposal = {
      ...this.proposal,
      justification: c.justification ?? this.proposal.justification,
      cited_evidence: [...this.proposal.cited_evidence, ...(c.cited_evidence ?? [])],
      scope_claim: c.scope_claim ? { ...this.proposal.scope_claim, ...c.scope_claim } : this.proposal.scope_claim,
    };
    this.clarifyRounds += 1;
    this.pendingClarification = null;
  }

  isApprover(id: string): boolean {
    return this.policy.spec.escalation.approvers.includes(id);
  }

  /**
   * Why a human decision cannot be accepted now, or null. Used by the Update validator. `nowMs`
   * is workflow time, for the freshness of a signed decision.
   */
  refuseDecision(d: HumanDecision, nowMs: number): string | null {
    if (this.stage !== 'awaiting_human') {
      return `proposal ${this.proposal.proposal_id} is not awaiting a human decision (stage: ${this.stage})`;
    }
    if (!this.isApprover(d.approver)) return `${d.approver} is not an approver for this proposal`;
    if (this.decisions.some((x) => x.approver === d.approver)) return `${d.approver} has already decided this proposal`;
    return refuseDecisionSignature(this.policy, this.workflowId, d, nowMs);
  }

  approvals(): DecisionRecord[] {
    return this.decisions.filter((d) => d.decision === 'approve');
  }

  /** Records a decision; the escalation ends on a reject, or once the quorum of approvals is met. */
  addDecision(d: HumanDecision, at: string): 'approved' | 'rejected' | 'pending' {
    this.decisions.push({ ...d, at });
    if (d.decision === 'reject') return 'rejected';
    return this.approvals().length >= this.approvalsNeeded ? 'approved' : 'pending';
  }

  /** A decision has arrived that ends the human wait. */
  humanWaitOver(): boolean {
    return this.decisions.some((d) => d.decision === 'reject') || this.approvals().length >= this.approvalsNeeded;
  }

  status(): OutcomeStatus {
    switch (this.stage) {
      case 'judging':
      case 'executing':
        return 'pending';
      default:
        return this.stage;
    }
  }

  snapshot(): ProposalStatus {
    return {
      proposal_id: this.proposal.proposal_id,
      workflow_id: this.workflowId,
      status: this.status(),
      stage: this.stage,
      tier: this.tier,
      shadow: this.shadow,
      proposal: this.proposal,
      verdict: this.latest,
      verdicts: this.verdicts,
      clarify_rounds: this.clarifyRounds,
      max_clarify_rounds: this.policy.spec.clarify.maxRounds,
      deadlines: this.deadlines,
      dispute: this.dispute,
      decisions: this.decisions,
      approvals_needed: this.approvalsNeeded,
      execution: this.execution,
      audit_flag: this.auditFlag,
      policy: this.policy.metadata.name,
    };
  }
}
