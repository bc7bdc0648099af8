/**
 * The escalation layer of the proposal state (see core.ts): the dispute people are shown, the deadline and reminder,
 * who may decide and with which signature, approvals with edits, and the verdict people reached.
 */
import type { AnnouncementRef, EscalationNotice, ResolutionNotice } from '../../contracts/escalation';
import type { HumanDecision } from '../../contracts/messages';
import { durationMs } from '../../contracts/duration';
import type { DecisionRecord } from '../../contracts/status';
import type { Verdict } from '../../contracts/verdict';
import type { EditResult } from '../../contracts/action-edit';
import { refusal, type Refusal } from '../../contracts/refusal';
import { refuseDecider } from '../../contracts/decider';
import { unlistedActionTypeReason } from '../../policy/action-types';
import { decisionVerifier } from '../decision-verifier';
import { applyActionEdits, proposalContentDigest } from '../schemas';
import { ProposalCore } from './core';

/** People decide: the escalation, its decisions and their outcome. */
export class EscalationState extends ProposalCore {
  /** The approver whose approval with edits the rules are checking right now (the Update waits for them). */
  private _editCheck: string | null = null;

  /** How long people have to decide. */
  get escalationTimeoutMs(): number {
    return durationMs(this.policy.spec.escalation.timeout);
  }

  /** Why a person must decide, in the words the dispute shows. */
  escalationReason(v: Verdict | null): string {
    // An action type the risk matrix does not list says so (a typo gets its closest listed types).
    if (v === null) {
      const unlisted = unlistedActionTypeReason(this.policy, this._proposal.action_type);
      return unlisted ? `${unlisted}, a person must decide` : `tier ${this.tier}: a person must decide`;
    }
    // A verdict that names its own escalation (e.g. no model reviewed it) says why in its words.
    if (v.escalation) return v.escalation.reason;
    const { human } = this.policy.spec.thresholds;
    if (v.confidence < human) return `judge unsure (confidence ${v.confidence.toFixed(2)} is below ${human})`;
    return 'the judge asked for human review';
  }

  /**
   * Opens the escalation: the dispute (the actor's justification against the judge's reasoning)
   * and the deadline. Returns the notice every channel is told. `v` is null for the human-only tier.
   */
  openEscalation(v: Verdict | null, nowMs: number): EscalationNotice {
    this._dispute = {
      reason: this.escalationReason(v),
      actor_position: this._proposal.justification,
      judge_position: v ? v.reason : 'no judge review for this tier',
      judge_confidence: v ? v.confidence : null,
    };
    const deadline = new Date(nowMs + this.escalationTimeoutMs).toISOString();
    this._deadlines.human = deadline;
    return {
      workflow_id: this.workflowId,
      proposal: this._proposal,
      tier: this.tier,
      verdict: v,
      dispute: this._dispute,
      deadline,
      approvers: this.policy.spec.escalation.approvers,
      approvals_needed: this.approvalsNeeded,
    };
  }

  /**
   * The human wait split at the policy's reminder share: `[beforeReminder, afterReminder]`, or
   * `[whole]` when no reminder is configured.
   */
  humanWaits(): [number] | [number, number] {
    const timeoutMs = this.escalationTimeoutMs;
    const share = this.policy.spec.escalation.reminderAt;
    if (!(share > 0 && share < 1)) return [timeoutMs];
    const first = Math.round(timeoutMs * share);
    return [first, Math.max(1, timeoutMs - first)];
  }

  /** The wait for people is over (decided or expired). */
  closeEscalation(): void {
    this._deadlines.human = null;
  }

  /**
   * Why a human decision cannot be accepted now, or null. Used by the Update validator. `nowMs`
   * is workflow time, for the freshness of a signed decision.
   */
  refuseDecision(d: HumanDecision, nowMs: number): Refusal | null {
    if (this._stage !== 'awaiting_human') {
      return refusal(
        'wrong-stage',
        `proposal ${this._proposal.proposal_id} is not awaiting a human decision (stage: ${this._stage})`,
      );
    }
    const notDecider = refuseDecider(this.policy.spec.escalation.approvers, d.approver);
    if (notDecider) return notDecider;
    if (this._editCheck !== null)
      return refusal(
        'busy',
        `the rules are checking ${this._editCheck}'s approval with edits; send the decision again in a moment`,
      );
    const edit = this.editOf(d);
    if (edit && !edit.ok) return edit.refusal;
    // The signature before the repeat check, so a replayed signed decision is named as a replay.
    const signature = this.refuseSignature(d, nowMs, edit?.ok ? edit.value.edited.to_digest : undefined);
    if (signature) return signature;
    if (this._decisions.some((x) => x.approver === d.approver))
      return refusal('already-decided', `${d.approver} has already decided this proposal`);
    // A quorum approves one action: every approval names the same one, edited or not.
    const first = this.approvals()[0];
    if (d.decision === 'approve' && first) {
      const firstEdit = this.editOf(first);
      const want = firstEdit?.ok ? firstEdit.value.edited.to_digest : null;
      const mine = edit?.ok ? edit.value.edited.to_digest : null;
      if (want !== mine) {
        return refusal(
          'quorum.other-action',
          want === null
            ? `${first.approver} approved the action as proposed: approve it unedited, or reject it`
            : `${first.approver} approved an edited action (sha256 ${want.slice(0, 16)}…): approve with the same ` +
                'edits, or reject it',
        );
      }
    }
    return null;
  }

  /** The edited action a decision's edits make of the proposal as the approver was shown it; null without edits. */
  editOf(d: HumanDecision): EditResult | null {
    return d.edits ? applyActionEdits(this._proposal, d.edits) : null;
  }

  /** The rules are checking an approval with edits (the Update awaits them): other decisions wait. */
  beginEditCheck(approver: string): void {
    this._editCheck = approver;
  }
  endEditCheck(): void {
    this._editCheck = null;
  }
  /** True while people may still decide: the escalation is open (its deadline set) and awaits them. */
  awaitingHuman(): boolean {
    return this._stage === 'awaiting_human' && this._deadlines.human !== null;
  }

  /** The decision-signature check lives with the signing code; this is its one call site. */
  private refuseSignature(d: HumanDecision, nowMs: number, editedSha256?: string): Refusal | null {
    // Loaded when the escalation opened (decision-verifier.ts); refuse rather than accept unverified.
    const refuseDecisionSignature = decisionVerifier();
    if (!refuseDecisionSignature)
      return refusal('starting', 'signature verification is not loaded yet; send the decision again');
    const binding = {
      workflowId: this.workflowId,
      runId: this.firstRunId ?? '',
      contentSha256: proposalContentDigest(this._proposal),
      ...(editedSha256 !== undefined ? { editedSha256 } : {}),
    };
    return refuseDecisionSignature(this.policy, binding, d, nowMs, this.acceptedNonces());
  }

  /**
   * Nonces of the signed decisions this run accepted, kept with the decisions themselves: at most
   * one per approver, so the record is bounded by the policy's approver list.
   */
  acceptedNonces(): string[] {
    return this._decisions.flatMap((x) => (x.signature ? [x.signature.nonce] : []));
  }

  approvals(): DecisionRecord[] {
    return this._decisions.filter((d) => d.decision === 'approve');
  }

  /** Records a decision; the escalation ends on a reject, or once the quorum of approvals is met. */
  addDecision(d: HumanDecision, at: string): 'approved' | 'rejected' | 'pending' {
    this._decisions.push({ ...d, at });
    if (d.decision === 'reject') return 'rejected';
    return this.approvals().length >= this.approvalsNeeded ? 'approved' : 'pending';
  }

  /** A decision has arrived that ends the human wait. */
  humanWaitOver(): boolean {
    return this._decisions.some((d) => d.decision === 'reject') || this.approvals().length >= this.approvalsNeeded;
  }

  /**
   * The verdict people reached: no decision in time is a REJECT by the clock; the first rejecter
   * rejects; else an APPROVE by the last approver, under the latest verdict's constraints.
   */
  humanOutcome(decided: boolean, now: string): Verdict {
    if (!decided) {
      return this.verdict(
        'REJECT',
        `no human decision before the deadline (${this.policy.spec.escalation.timeout})`,
        'timeout',
        now,
      );
    }
    const rejecter = this._decisions.find((d) => d.decision === 'reject');
    if (rejecter) {
      return this.verdict(
        'REJECT',
        rejecter.reason ?? `rejected by ${rejecter.approver}`,
        `human:${rejecter.approver}`,
        now,
      );
    }
    const approvals = this.approvals();
    const last = approvals[approvals.length - 1]!;
    // Approved with edits: the edited action (every approval named it) is what is performed from here on.
    const edit = this.editOf(approvals[0]!);
    if (edit?.ok) this._edited = { ...edit.value.edited, by: approvals[0]!.approver, proposal: edit.value.proposal };
    const edited = this._edited
      ? {
          edited: {
            from_digest: this._edited.from_digest,
            to_digest: this._edited.to_digest,
            changes: this._edited.changes,
          },
        }
      : {};
    return this.verdict(
      'APPROVE',
      last.reason ?? `approved by ${approvals.map((a) => a.approver).join(', ')}`,
      `human:${last.approver}`,
      now,
      { constraints: this.latest?.constraints ?? { require_human_review: false }, ...edited },
    );
  }

  /** The notice that edits every announcement once the escalation is resolved. */
  resolutionNotice(refs: AnnouncementRef[]): ResolutionNotice {
    return {
      workflow_id: this.workflowId,
      proposal_id: this._proposal.proposal_id,
      status: this.status(),
      verdict: this.latest,
      decisions: this._decisions,
      refs,
    };
  }
}
