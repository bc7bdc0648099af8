/**
 * The proposal workflow's state and decisions, as a small class with pure methods (the
 * safe-message-handlers pattern): the workflow function registers handlers, runs activities and
 * waits; this class decides. No Temporal calls, no I/O, no clock of its own (callers pass workflow
 * time), plain JSON fields written only by its own methods: it is unit-tested without a server.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { GrantUsed } from '../contracts/grant';
import type { z } from 'zod';
import type { EscalationNotice, AnnouncementRef, ResolutionNotice } from '../contracts/escalation';
import type { UncertainExecutionNotice } from '../contracts/escalation';
import { UNCERTAIN_EXPLANATION } from '../contracts/lifecycle';
import { FailureType, isSettledStage, outcomeStatusOf, routeVerdict, type VerdictRoute } from '../contracts/lifecycle';
import type { Clarification, HumanDecision } from '../contracts/messages';
import { durationMs } from '../contracts/duration';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { DecisionRecord, ExecutionResult, OutcomeStatus, ProposalStatus, Stage } from '../contracts/status';
import type { Dispute, Tier, Verdict } from '../contracts/verdict';
import { withinScope } from '../contracts/repo-path';
import { PROPOSAL_ID_TAKEN_RULE, workflowIdNamedBy } from '../contracts/workflow-ids';
import { describeIssues } from '../contracts/zod-error';
import { lightweightCheck } from '../policy/patterns';
import { memoryStoreFinding } from '../contracts/memory-stores';
import { decisionVerifier } from './decision-verifier';
import type {
  CapabilityRecord,
  CapabilityRedemption,
  CapabilityRequest,
  IssuedCapability,
  RedeemCapabilityInput,
  SettleClaim,
} from '../contracts/capability';
import type { CallerOutcome, CallerRecord } from '../contracts/caller-outcome';
import type { EditedRecord, EditResult } from '../contracts/action-edit';
import {
  applyActionEdits,
  CallerOutcomeSchema,
  capabilityBinding,
  capabilityRequestFor,
  ClarificationSchema,
  EXECUTOR_REDEEMER,
  HumanDecisionSchema,
  policyDigest,
  proposalContentDigest,
} from './contracts';

/**
 * What the workflow does after a verdict: the routing rule's answer, plus `give-up` for a CLARIFY
 * past the round limit (a REJECT, seed 000 §3.3).
 */
export type NextStep = VerdictRoute | 'give-up';

/**
 * An Update's argument as its schema reads it, or a non-retryable `BadInput` failure that refuses
 * the Update. Never a ZodError: thrown from a handler, that fails the workflow task, which retries
 * forever. Validators and handlers both read their input through this one function, so a handler
 * works with exactly what its validator accepted (and stays safe on replay, where validators do
 * not run).
 */
export function readUpdateInput<S extends z.ZodType>(schema: S, what: string, raw: unknown): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw ApplicationFailure.nonRetryable(describeIssues(what, parsed.error.issues), FailureType.BadInput);
  return parsed.data;
}

/** The `clarify` Update's argument, checked. */
export const readClarification = (raw: unknown): Clarification =>
  readUpdateInput(ClarificationSchema, 'clarification', raw);
/** The `humanDecision` Update's argument, checked (with its defaults applied). */
export const readDecision = (raw: unknown): HumanDecision => readUpdateInput(HumanDecisionSchema, 'decision', raw);
/** The `callerOutcome` Update's argument, checked. */
export const readCallerOutcome = (raw: unknown): CallerOutcome =>
  readUpdateInput(CallerOutcomeSchema, 'caller outcome', raw);

/**
 * An Update argument of non-empty, bounded strings (`limits`: field -> longest), checked without a schema (this module
 * is evaluated for every proposal run; see docs/performance.md). Throws a non-retryable BadInput naming the field.
 */
function readStrings<F extends string>(
  what: string,
  raw: unknown,
  limits: Record<F, number>,
): { value: Record<string, unknown>; strings: Record<F, string>; fail: (why: string) => ApplicationFailure } {
  const fail = (why: string) => ApplicationFailure.nonRetryable(`${what}: ${why}`, FailureType.BadInput);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw fail('expected an object');
  const value = raw as Record<string, unknown>;
  const strings = {} as Record<F, string>;
  for (const field of Object.keys(limits) as F[]) {
    const v = value[field];
    if (typeof v !== 'string' || v.length === 0) throw fail(`${field}: expected a non-empty string`);
    if (v.length > limits[field]) throw fail(`${field}: too long`);
    strings[field] = v;
  }
  return { value, strings, fail };
}

const REDEEM_LIMITS = { token: 4096, audience: 256, action_sha256: 256, redeemer: 256, nonce: 256 };

/** The `redeemCapability` Update's argument, checked: five non-empty strings of bounded length, and `claim`. */
export function readRedemption(raw: unknown): RedeemCapabilityInput {
  const { value, strings, fail } = readStrings('redemption', raw, REDEEM_LIMITS);
  if (value.claim !== undefined && value.claim !== 'forwarding') throw fail('claim: expected "forwarding" or nothing');
  return { ...strings, ...(value.claim === 'forwarding' ? { claim: 'forwarding' as const } : {}) };
}

const SETTLE_CLAIM_LIMITS = { audience: 256, action_sha256: 256, redeemer: 256, nonce: 256, claim_before: 256 };

/** The `awaitSettled` Update's optional argument, checked the same way (see {@link SettleClaim}). */
export function readSettleClaim(raw: unknown): SettleClaim {
  const { value, strings, fail } = readStrings('settle claim', raw, SETTLE_CLAIM_LIMITS);
  if (value.claim !== 'forwarding') throw fail('claim: expected "forwarding"');
  if (Number.isNaN(Date.parse(strings.claim_before))) throw fail('claim_before: expected an ISO 8601 time');
  return { claim: 'forwarding', ...strings };
}

/**
 * Why a run submitted under `proposalId` cannot be withdrawn: a proposal_id that names its content is never held by
 * other content, and an action already performed stays on the record as performed.
 */
export function refuseWithdrawalOf(
  proposalId: string,
  execution: ExecutionResult | null = null,
  caller: CallerRecord | null = null,
): string | null {
  if (workflowIdNamedBy(proposalId) !== null)
    return `proposal_id ${proposalId} names this proposal's content: it is never held by another`;
  if (execution?.status === 'succeeded' || caller?.outcome === 'ok') return 'the approved action was already performed';
  return null;
}

/** The `withdraw` Update's argument, checked: one non-empty reason of at most 2,000 characters. */
export function readWithdrawal(raw: unknown): { reason: string } {
  return { reason: readStrings('withdrawal', raw, { reason: 2000 }).strings.reason };
}

/** Moved to contracts (the MCP proxy computes the same binding): re-exported for existing imports. */
export { capabilityBinding };

export class ProposalState {
  private _proposal: Proposal;
  private _stage: Stage = 'judging';
  private _verdicts: Verdict[] = [];
  private _clarifyRounds = 0;
  private _deadlines: { clarification: string | null; human: string | null } = { clarification: null, human: null };
  private _dispute: Dispute | null = null;
  private _decisions: DecisionRecord[] = [];
  private _execution: ExecutionResult | null = null;
  private _auditFlag = false;
  private _pendingClarification: Clarification | null = null;
  private _settledCount = 0;
  private _capability: CapabilityRecord | null = null;
  private _caller: CallerRecord | null = null;
  private _callerUncertain = false;
  private _edited: EditedRecord | null = null;
  /** The approver whose approval with edits the rules are checking right now (the Update waits for them). */
  private _editCheck: string | null = null;

  constructor(
    proposal: Proposal,
    readonly policy: CompliancePolicy,
    readonly workflowId: string,
    readonly tier: Tier,
    readonly shadow: boolean,
    readonly approvalsNeeded: number,
    /**
     * The workflow chain's first execution run id, which signed decisions must name (see
     * identity/decision.ts). Null when unknown: then no signed decision can be accepted.
     */
    readonly firstRunId: string | null = null,
  ) {
    this._proposal = proposal;
  }

  /** The digest of the policy snapshot this run is judged under (set from the snapshot; computed when unset). */
  policySha256: string | undefined;

  /** The proposal as it currently stands (clarifications applied). */
  get proposal(): Proposal {
    return this._proposal;
  }
  get stage(): Stage {
    return this._stage;
  }
  /** The action that is performed: the edited action once a person approved with edits, else the proposal. */
  get actionProposal(): Proposal {
    return this._edited?.proposal ?? this._proposal;
  }
  get edited(): EditedRecord | null {
    return this._edited;
  }
  get verdicts(): readonly Verdict[] {
    return this._verdicts;
  }
  get latest(): Verdict | null {
    return this._verdicts[this._verdicts.length - 1] ?? null;
  }
  get clarifyRounds(): number {
    return this._clarifyRounds;
  }
  get deadlines(): { readonly clarification: string | null; readonly human: string | null } {
    return this._deadlines;
  }
  get dispute(): Dispute | null {
    return this._dispute;
  }
  get decisions(): readonly DecisionRecord[] {
    return this._decisions;
  }
  get execution(): ExecutionResult | null {
    return this._execution;
  }
  get auditFlag(): boolean {
    return this._auditFlag;
  }
  get pendingClarification(): Clarification | null {
    return this._pendingClarification;
  }
  /** Bumped each time the workflow reaches a settled stage, so Update handlers know "after". */
  get settledCount(): number {
    return this._settledCount;
  }

  setStage(stage: Stage): void {
    this._stage = stage;
    if (isSettledStage(stage)) this._settledCount += 1;
  }

  /** True once the proposal has settled at least once and is not judging or executing right now. */
  isSettled(): boolean {
    return this._settledCount > 0 && isSettledStage(this._stage);
  }

  // --- verdicts -------------------------------------------------------------------------------

  /** A verdict of this proposal's tier, decided now by the policy, the rules, a person or the clock. */
  verdict(
    verdict: Verdict['verdict'],
    reason: string,
    decidedBy: Verdict['decided_by'],
    now: string,
    extra: Partial<Verdict> = {},
  ): Verdict {
    return {
      proposal_id: this._proposal.proposal_id,
      verdict,
      reason,
      constraints: { require_human_review: false },
      escalation: null,
      confidence: 1,
      decided_by: decidedBy,
      tier: this.tier,
      decided_at: now,
      ...extra,
    };
  }

  /** Appends a verdict to the history (stamped now when it carries no time) and returns it. */
  recordVerdict(v: Verdict, now: string): Verdict {
    const recorded = { ...v, decided_at: v.decided_at ?? now };
    this._verdicts.push(recorded);
    return recorded;
  }

  /** The no-judge tier: the policy approves at once. */
  noJudgeVerdict(now: string): Verdict {
    return this.verdict('APPROVE', `tier no-judge: ${this._proposal.action_type} needs no review`, 'policy', now);
  }

  /** A memory_write into a store not the agent's (src/contracts/memory-stores.ts), as a REJECT; null otherwise. */
  memoryStoreVerdict(now: string): Verdict | null {
    const finding = memoryStoreFinding(this._proposal, this.policy);
    return finding && this.verdict(finding.verdict, finding.reason, 'rules', now, { rule: finding.rule });
  }

  /** The lightweight tier: deny patterns and topic lists decide, naming the rule. */
  patternVerdict(now: string): Verdict {
    const finding = lightweightCheck(this._proposal, this.policy);
    return this.verdict(finding.verdict, finding.reason, 'rules', now, { rule: finding.rule });
  }

  /** A live grant took this proposal as one of its uses (docs/grants.md): approved by the grant, not judged. */
  grantVerdict(used: GrantUsed, now: string): Verdict {
    return this.verdict(
      'APPROVE',
      `covered by grant ${used.grant_id} from ${used.approver} (use ${used.uses} of ${used.max_uses}, until ` +
        `${used.expires_at})`,
      `grant:${used.grant_id}`,
      now,
      { rule: 'grant' },
    );
  }

  /** No judge answered (worker down, retries exhausted): confidence 0 sends the proposal to a person. */
  judgeUnavailableVerdict(why: string, now: string): Verdict {
    return this.verdict('CLARIFY', `the judge could not be reached: ${why}`, 'judge', now, {
      confidence: 0,
      rule: 'judge.unavailable',
      constraints: { require_human_review: true },
    });
  }

  /** Seed 000 §3.3 routing, with this policy's thresholds (the same rule `agent-judge eval` uses). */
  route(v: Verdict): VerdictRoute {
    return routeVerdict(v, this.policy.spec.thresholds);
  }

  /** What follows a verdict: shadow mode executes regardless; a CLARIFY past the round limit gives up. */
  nextStep(v: Verdict): NextStep {
    if (this.shadow) return 'execute';
    const step = this.route(v);
    if (step === 'clarify' && !this.canClarify()) return 'give-up';
    return step;
  }

  /** The REJECT for a proposal still unclear after the last clarify round. */
  clarifyExhaustedVerdict(last: Verdict, now: string): Verdict {
    return this.verdict(
      'REJECT',
      `still unclear after ${this._clarifyRounds} clarify round(s): ${last.reason}`,
      'rules',
      now,
      { rule: 'clarify.max-rounds' },
    );
  }

  // --- clarification --------------------------------------------------------------------------

  /** True when another CLARIFY round is still allowed. */
  canClarify(): boolean {
    return this._clarifyRounds < this.policy.spec.clarify.maxRounds;
  }

  /** Starts waiting for the actor; returns how long the wait may last. */
  openClarification(nowMs: number): number {
    const clarifyMs = durationMs(this.policy.spec.clarify.timeout);
    this._deadlines.clarification = new Date(nowMs + clarifyMs).toISOString();
    return clarifyMs;
  }

  /** The wait for the actor is over (answered or expired). */
  closeClarification(): void {
    this._deadlines.clarification = null;
  }

  /** The REJECT when the actor did not answer a CLARIFY in time. */
  clarifyTimeoutVerdict(now: string): Verdict {
    return this.verdict(
      'REJECT',
      `no clarification before the deadline (${this.policy.spec.clarify.timeout})`,
      'timeout',
      now,
    );
  }

  /** Why a clarification cannot be accepted now, or null. Used by the Update validator. */
  refuseClarification(c: Clarification): string | null {
    if (this._stage !== 'awaiting_clarification') {
      return `proposal ${this._proposal.proposal_id} is not awaiting clarification (stage: ${this._stage})`;
    }
    if (this._pendingClarification) return 'a clarification is already being judged';
    const before = this._proposal.scope_claim;
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

  /** The actor's answer arrived (checked by the validator); the workflow applies it next. */
  receiveClarification(c: Clarification): void {
    this._pendingClarification = c;
  }

  /** The proposal as the actor clarified it: evidence added, scope narrowed, justification replaced. */
  applyClarification(c: Clarification): void {
    this._proposal = {
      ...this._proposal,
      justification: c.justification ?? this._proposal.justification,
      cited_evidence: [...this._proposal.cited_evidence, ...(c.cited_evidence ?? [])],
      scope_claim: c.scope_claim ? { ...this._proposal.scope_claim, ...c.scope_claim } : this._proposal.scope_claim,
    };
    this._clarifyRounds += 1;
    this._pendingClarification = null;
  }

  /** Applies the clarification that arrived; false when none did. */
  applyPendingClarification(): boolean {
    if (!this._pendingClarification) return false;
    this.applyClarification(this._pendingClarification);
    return true;
  }

  // --- escalation -----------------------------------------------------------------------------

  /** How long people have to decide. */
  get escalationTimeoutMs(): number {
    return durationMs(this.policy.spec.escalation.timeout);
  }

  /** Why a person must decide, in the words the dispute shows. */
  escalationReason(v: Verdict | null): string {
    if (v === null) return `tier ${this.tier}: a person must decide`;
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

  isApprover(id: string): boolean {
    return this.policy.spec.escalation.approvers.includes(id);
  }

  /**
   * Why a human decision cannot be accepted now, or null. Used by the Update validator. `nowMs`
   * is workflow time, for the freshness of a signed decision.
   */
  refuseDecision(d: HumanDecision, nowMs: number): string | null {
    if (this._stage !== 'awaiting_human') {
      return `proposal ${this._proposal.proposal_id} is not awaiting a human decision (stage: ${this._stage})`;
    }
    if (!this.isApprover(d.approver)) return `${d.approver} is not an approver for this proposal`;
    if (this._editCheck !== null)
      return `the rules are checking ${this._editCheck}'s approval with edits; send the decision again in a moment`;
    const edit = this.editOf(d);
    if (edit && !edit.ok) return edit.error;
    // The signature before the repeat check, so a replayed signed decision is named as a replay.
    const signature = this.refuseSignature(d, nowMs, edit?.ok ? edit.edited.to_digest : undefined);
    if (signature) return signature;
    if (this._decisions.some((x) => x.approver === d.approver))
      return `${d.approver} has already decided this proposal`;
    // A quorum approves one action: every approval names the same one, edited or not.
    const first = this.approvals()[0];
    if (d.decision === 'approve' && first) {
      const firstEdit = this.editOf(first);
      const want = firstEdit?.ok ? firstEdit.edited.to_digest : null;
      const mine = edit?.ok ? edit.edited.to_digest : null;
      if (want !== mine) {
        return want === null
          ? `${first.approver} approved the action as proposed: approve it unedited, or reject it`
          : `${first.approver} approved an edited action (sha256 ${want.slice(0, 16)}…): approve with the same ` +
              'edits, or reject it';
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
  private refuseSignature(d: HumanDecision, nowMs: number, editedSha256?: string): string | null {
    // Loaded when the escalation opened (decision-verifier.ts); refuse rather than accept unverified.
    const refuseDecisionSignature = decisionVerifier();
    if (!refuseDecisionSignature) return 'signature verification is not loaded yet; send the decision again';
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
    if (edit?.ok) this._edited = { ...edit.edited, by: approvals[0]!.approver, proposal: edit.proposal };
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

  // --- rejection and execution ----------------------------------------------------------------

  /** Repeated rejections on this target raised the audit flag. */
  raiseAuditFlag(): void {
    this._auditFlag = true;
  }

  /** What the executor reported (or did not); returns the stage the proposal ends in. */
  recordExecution(result: ExecutionResult): Stage {
    if (result.executor === 'none') {
      this._execution = null;
      return 'approved';
    }
    this._execution = result;
    if (result.status === 'uncertain') return 'uncertain';
    return result.status === 'succeeded' ? 'executed' : 'failed';
  }

  /** The executor never reported back: the action may or may not have run, and a person must look. */
  executorUnreachable(why: string, startedAt: string, now: string): ExecutionResult {
    return {
      status: 'uncertain',
      executor: 'unreachable',
      error: `the executor did not report back (${why}); ${UNCERTAIN_EXPLANATION}`,
      shadow: this.shadow,
      started_at: startedAt,
      finished_at: now,
    };
  }

  /** What people are told when the execution's outcome is uncertain (an escalation of its own). */
  uncertainNotice(): UncertainExecutionNotice | null {
    if (this._execution?.status !== 'uncertain') return null;
    return {
      workflow_id: this.workflowId,
      proposal: this.actionProposal,
      execution: this._execution,
      explanation: UNCERTAIN_EXPLANATION,
      approvers: this.policy.spec.escalation.approvers,
    };
  }

  // --- capability tokens (seed 000 §8) ----------------------------------------------------------

  get capability(): CapabilityRecord | null {
    return this._capability;
  }

  /** What the issuing activity signs: this proposal's agent, audience and action, under this policy. */
  capabilityRequest(ttlMs: number, policySha256: string = policyDigest(this.policy)): CapabilityRequest {
    return capabilityRequestFor(this.workflowId, this.actionProposal, policySha256, ttlMs);
  }

  /** The token the workflow worker issued; `executedHere` when agent-judge's executor will redeem it. */
  recordCapability(issued: IssuedCapability, executedHere: boolean): void {
    this._capability = {
      token: issued.token,
      token_id: issued.claims.jti,
      kid: issued.kid,
      audience: issued.claims.aud,
      action_sha256: issued.claims.action_sha256,
      issued_at: issued.claims.iat,
      expires_at: issued.claims.exp,
      executed_by_agent_judge: executedHere,
      redemption: null,
      expired_at: null,
    };
  }

  /**
   * Agent-judge's own executor redeems the token as the workflow hands it over: recorded here, synchronously with
   * the token's issue and in the workflow task that schedules the execute activity, so no Update redeemed it before
   * and every later one is refused (`already redeemed ... by agent-judge-executor`). The executor then verifies the
   * token and that Temporal says this run scheduled its activity (src/activities/execute.ts): one Update, and the
   * workflow task that would answer it, fewer per executed action.
   */
  redeemForExecutor(now: string): CapabilityRedemption {
    const c = this._capability;
    if (!c || !c.executed_by_agent_judge || c.redemption) {
      throw new Error('redeemForExecutor: the token is not an unredeemed one for agent-judge to execute');
    }
    c.redemption = {
      token_id: c.token_id,
      audience: c.audience,
      redeemer: EXECUTOR_REDEEMER,
      nonce: `executor:${this.workflowId}:${c.token_id}`,
      redeemed_at: now,
    };
    return c.redemption;
  }

  /**
   * Why a redemption cannot be accepted, or null. The token must be exactly the one this run issued
   * (a token of another run or workflow never matches), for the audience the performer is and the
   * action it is about to perform, unexpired (workflow time) and unredeemed.
   */
  refuseRedemption(r: RedeemCapabilityInput, nowMs: number): string | null {
    const c = this._capability;
    if (!c) return `proposal ${this._proposal.proposal_id} has no capability token (stage: ${this._stage})`;
    if (r.token !== c.token) return 'this token was not issued for this proposal run';
    if (c.redemption)
      return `the token ${c.token_id} was already redeemed at ${c.redemption.redeemed_at} by ${c.redemption.redeemer}`;
    if (c.expired_at !== null || Date.parse(c.expires_at) <= nowMs) return `the token expired at ${c.expires_at}`;
    if (r.audience !== c.audience) return `the token is for ${c.audience}, not ${r.audience}`;
    if (r.action_sha256 !== c.action_sha256)
      return `the action about to be performed is not the approved one (sha256 ${r.action_sha256.slice(0, 16)}…)`;
    if (r.claim === 'forwarding') return this.refuseCallerOutcome({ outcome: 'forwarding' });
    return null;
  }

  /** Records the accepted redemption (the validator has checked it). */
  redeemCapability(r: RedeemCapabilityInput, now: string): CapabilityRedemption {
    const c = this._capability!;
    const redemption = {
      token_id: c.token_id,
      audience: r.audience,
      redeemer: r.redeemer,
      nonce: r.nonce,
      redeemed_at: now,
    };
    c.redemption = redemption;
    // Redeeming for the caller's one performance claims it too (the validator checked it can be claimed).
    if (r.claim === 'forwarding') this.recordCallerOutcome({ outcome: 'forwarding' }, now);
    return redemption;
  }

  /**
   * The run has settled: if it settled approved for its caller to perform, before `claim_before`, redeem the token for
   * the claim's audience and action and claim the one performance, exactly as an accepted `redeemCapability` with
   * `claim: 'forwarding'` does (the same checks refuse it: another action, audience, expired, already claimed).
   * Returns whether the claim was taken; when not, nothing changed.
   */
  claimOnSettle(claim: SettleClaim, nowMs: number, now: string): boolean {
    const c = this._capability;
    if (!c || this._caller === null || nowMs > Date.parse(claim.claim_before)) return false;
    const redemption: RedeemCapabilityInput = {
      token: c.token,
      audience: claim.audience,
      action_sha256: claim.action_sha256,
      redeemer: claim.redeemer,
      nonce: claim.nonce,
      claim: 'forwarding',
    };
    if (this.refuseRedemption(redemption, nowMs) !== null) return false;
    this.redeemCapability(redemption, now);
    return true;
  }

  /** True while a caller-performed action's token waits to be redeemed (the run stays open for it). */
  awaitsRedemption(): boolean {
    const c = this._capability;
    return c !== null && !c.executed_by_agent_judge && c.redemption === null && c.expired_at === null;
  }

  /** How long the run keeps waiting for the redemption: until the token expires (at least 1 ms). */
  redemptionWaitMs(nowMs: number): number {
    return Math.max(1, Date.parse(this._capability?.expires_at ?? '') - nowMs || 1);
  }

  /** Nobody redeemed the token before it expired. */
  expireCapability(now: string): void {
    if (this._capability && !this._capability.redemption) this._capability.expired_at = now;
  }

  // --- performed by the caller (the MCP proxy) ------------------------------------------------

  /** True when the caller performs the approved action, never agent-judge's executors. */
  get performedByCaller(): boolean {
    return this._proposal.performer?.by === 'caller';
  }
  get caller(): CallerRecord | null {
    return this._caller;
  }

  /** Approved: the caller may now forward the call, until `deadline`. */
  openCallerWindow(deadline: string): void {
    this._caller = { forwarded_at: null, outcome: null, finished_at: null, deadline };
  }

  /** Why a caller outcome is refused now, or null. */
  refuseCallerOutcome(o: CallerOutcome): string | null {
    if (!this.performedByCaller) return 'this proposal is performed by agent-judge, not by its caller';
    const c = this._caller;
    if (!c) return `the proposal is not approved for its caller to perform (stage ${this._stage})`;
    if (c.outcome !== null) return `the outcome was already recorded (${c.outcome})`;
    if (o.outcome === 'forwarding' && c.forwarded_at !== null) {
      return `the approved call was already forwarded once (at ${c.forwarded_at}); it is never forwarded twice`;
    }
    if (o.outcome === 'abandoned' && c.forwarded_at !== null) {
      return 'the call was forwarded: report ok, tool_error or upstream_failure';
    }
    if ((o.outcome === 'ok' || o.outcome === 'tool_error') && c.forwarded_at === null) {
      return 'claim the call (forwarding) before reporting what the upstream did';
    }
    return null;
  }

  recordCallerOutcome(o: CallerOutcome, now: string): void {
    const c = this._caller;
    if (!c) return;
    if (o.outcome === 'forwarding') {
      c.forwarded_at = now;
      return;
    }
    c.outcome = o.outcome;
    c.finished_at = now;
    if (o.detail !== undefined) c.detail = o.detail;
  }

  callerDone(): boolean {
    return this._caller?.outcome != null;
  }

  /** Nothing reported before the deadline: never forwarded is abandoned; forwarded without an answer is unknown. */
  callerTimedOut(now: string): void {
    const c = this._caller;
    if (!c || c.outcome !== null) return;
    const forwarded = c.forwarded_at !== null;
    this._callerUncertain = forwarded;
    this.recordCallerOutcome(
      {
        outcome: forwarded ? 'upstream_failure' : 'abandoned',
        detail: forwarded
          ? 'forwarded, but no outcome was reported before the deadline: check the target'
          : 'approved, but not forwarded before the deadline',
      },
      now,
    );
  }

  /** The stage the proposal ends in after its caller's outcome. */
  callerStage(): Stage {
    switch (this._caller?.outcome) {
      case 'ok':
        return 'executed';
      case 'tool_error':
        return 'failed';
      case 'upstream_failure':
        // The upstream answered with an error: not performed. No answer at all: it may have been.
        return this._callerUncertain ? 'uncertain' : 'failed';
      default:
        return 'approved';
    }
  }

  // --- a chosen proposal_id held by other content --------------------------------------------

  /**
   * Why this run cannot be withdrawn for a taken proposal_id, or null. Only a chosen proposal_id is reserved apart
   * from the run (`reserveProposalId` in src/client/proposals.ts); one that names its content is unique by its workflow
   * id and never taken by other content.
   */
  refuseWithdrawal(): string | null {
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

  status(): OutcomeStatus {
    return outcomeStatusOf(this._stage, false);
  }

  snapshot(): ProposalStatus {
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
