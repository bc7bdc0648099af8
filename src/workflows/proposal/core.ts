/**
 * The proposal workflow's state and decisions, as a small class with pure methods (the
 * safe-message-handlers pattern): the workflow function registers handlers, runs activities and
 * waits; this class decides. No Temporal calls, no I/O, no clock of its own (callers pass workflow
 * time), plain JSON fields written only by its own methods: it is unit-tested without a server.
 *
 * {@link ProposalState} (state.ts) is this core, one concept per file, layered by `extends`: the core (stage,
 * verdicts, clarification, execution) here, then escalation.ts (people decide), caller-window.ts (the caller performs)
 * and capability.ts (the single-use token). One object, the same fields and methods as one class.
 */
import type { Clarification } from '../../contracts/messages';
import type { UncertainExecutionNotice } from '../../contracts/escalation';
import type { GrantUsed } from '../../contracts/grant';
import {
  isSettledStage,
  outcomeStatusOf,
  routeVerdict,
  UNCERTAIN_EXPLANATION,
  type VerdictRoute,
} from '../../contracts/lifecycle';
import { durationMs } from '../../contracts/duration';
import type { CompliancePolicy } from '../../contracts/policy';
import type { Proposal } from '../../contracts/proposal';
import { refusal, type Refusal } from '../../contracts/refusal';
import type { DecisionRecord, ExecutionResult, OutcomeStatus, Stage } from '../../contracts/status';
import type { Dispute, Tier, Verdict } from '../../contracts/verdict';
import { withinScope } from '../../contracts/repo-path';
import type { EditedRecord } from '../../contracts/action-edit';
import { memoryStoreFinding } from '../../contracts/memory-stores';
import { lightweightCheck } from '../../policy/patterns';

/**
 * What the workflow does after a verdict: the routing rule's answer, plus `give-up` for a CLARIFY
 * past the round limit (a REJECT, seed 000 §3.3).
 */
export type NextStep = VerdictRoute | 'give-up';

/** The proposal's core state: stage, verdicts, clarification rounds and execution. */
export class ProposalCore {
  protected _proposal: Proposal;
  protected _stage: Stage = 'judging';
  protected _verdicts: Verdict[] = [];
  protected _clarifyRounds = 0;
  protected _deadlines: { clarification: string | null; human: string | null } = { clarification: null, human: null };
  protected _dispute: Dispute | null = null;
  protected _decisions: DecisionRecord[] = [];
  protected _execution: ExecutionResult | null = null;
  protected _auditFlag = false;
  protected _pendingClarification: Clarification | null = null;
  protected _settledCount = 0;
  protected _edited: EditedRecord | null = null;

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

  /** The outcome status the stage stands for. */
  status(): OutcomeStatus {
    return outcomeStatusOf(this._stage, false);
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
  refuseClarification(c: Clarification): Refusal | null {
    if (this._stage !== 'awaiting_clarification') {
      return refusal(
        'wrong-stage',
        `proposal ${this._proposal.proposal_id} is not awaiting clarification (stage: ${this._stage})`,
      );
    }
    if (this._pendingClarification) return refusal('busy', 'a clarification is already being judged');
    const before = this._proposal.scope_claim;
    const after = c.scope_claim;
    // A field left out keeps its earlier value (applyClarification merges); a field given may only narrow.
    if (after) {
      if (before.max_lines !== undefined && after.max_lines !== undefined && after.max_lines > before.max_lines) {
        return refusal('scope.wider', `scope_claim.max_lines may only narrow (was ${before.max_lines})`);
      }
      if (before.files_only && after.files_only) {
        // Normalised first: `src/schema/../auth/` must not pass as inside `src/schema/`.
        const wider = after.files_only.filter((f) => !withinScope(f, before.files_only!));
        if (wider.length > 0)
          return refusal(
            'scope.wider',
            `scope_claim.files_only may only narrow; not within the earlier scope: ${wider.join(', ')}`,
          );
      }
      if (before.no_existing_code_deletion === true && after.no_existing_code_deletion === false) {
        return refusal('scope.wider', 'scope_claim.no_existing_code_deletion may not be dropped');
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
}
