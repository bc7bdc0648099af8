/**
 * The lifecycle vocabulary of a proposal, each word defined once: stages, which of them are
 * settled or final, the outcome statuses users script against, how a verdict is routed, what an
 * evidence check can find, and the failure types that cross the activity boundary. Workflow,
 * judge, client, audit and escalation import these; nobody re-lists them.
 */
import type { CompliancePolicy } from './policy';
import type { Verdict } from './verdict';

/** Where a proposal's workflow is. `judging` and `executing` are transient. */
export const STAGES = [
  'judging',
  'awaiting_clarification',
  'awaiting_human',
  'executing',
  'executed',
  'approved',
  'rejected',
  'failed',
  'uncertain',
] as const;
export type Stage = (typeof STAGES)[number];

/** Stages where the workflow waits on someone or has finished: what `propose --wait` returns at. */
export const SETTLED_STAGES: readonly Stage[] = [
  'awaiting_clarification',
  'awaiting_human',
  'executed',
  'approved',
  'rejected',
  'failed',
  'uncertain',
];
/** Stages after which nothing about the proposal changes any more. */
export const FINAL_STAGES: readonly Stage[] = ['executed', 'approved', 'rejected', 'failed', 'uncertain'];

/** The outcome statuses users script against; `pending` while judging or executing. */
export const OUTCOME_STATUSES = [
  'executed',
  'approved',
  'rejected',
  'awaiting_clarification',
  'awaiting_human',
  'failed',
  'uncertain',
  'pending',
] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

export function isSettledStage(stage: Stage): boolean {
  return SETTLED_STAGES.includes(stage);
}

export function isFinalStage(stage: Stage): boolean {
  return FINAL_STAGES.includes(stage);
}

/** True for the outcome statuses nothing follows (the final stages' names). */
export function isFinalStatus(status: OutcomeStatus): boolean {
  return (FINAL_STAGES as readonly string[]).includes(status);
}

/**
 * The one status a proposal has, from its last stage and whether its run is closed. A closed run
 * that never reached a final stage (terminated, timed out, failed) is `failed`: nobody is waiting
 * for it any more, whatever its last stage said. `list`, `audit export` and the workflow share it.
 */
export function outcomeStatusOf(stage: Stage, closed: boolean): OutcomeStatus {
  if (isFinalStage(stage)) return stage as OutcomeStatus;
  if (closed) return 'failed';
  return stage === 'judging' || stage === 'executing' ? 'pending' : stage;
}

/**
 * What an executor reports. `uncertain`: an earlier attempt may have performed a non-idempotent
 * action (an `exec`, a webhook) and died before reporting; it is never run again and a person must
 * look.
 */
export const EXECUTION_STATUSES = ['succeeded', 'failed', 'refused', 'uncertain'] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

/** The one line `agent-judge status` and the notices show for an `uncertain` outcome: what to check. */
export const UNCERTAIN_EXPLANATION =
  'the executor died while performing this action and it was not run again: check the target ' +
  "(the command's effects, the webhook receiver) to see whether it happened, then act by hand if needed";

/** A stage read back from visibility (a search attribute), or `judging` when unknown. */
export function stageFrom(value: string | undefined): Stage {
  return (STAGES as readonly string[]).includes(value ?? '') ? (value as Stage) : 'judging';
}

/** Where a verdict leads: execute it, stand by a REJECT, ask the actor, or ask a person. */
export type VerdictRoute = 'execute' | 'reject' | 'clarify' | 'escalate';

/**
 * Seed 000 §3.3: confidence below the human threshold goes to a person, REJECT stands, CLARIFY or
 * confidence below the clarify threshold asks the actor, an approval that requires human review
 * goes to a person. The workflow and `agent-judge eval` both route through this.
 */
export function routeVerdict(
  v: Pick<Verdict, 'verdict' | 'confidence' | 'constraints' | 'escalation'>,
  thresholds: CompliancePolicy['spec']['thresholds'],
): VerdictRoute {
  if (v.confidence < thresholds.human) return 'escalate';
  if (v.verdict === 'REJECT') return 'reject';
  if (v.verdict === 'CLARIFY' || v.confidence < thresholds.clarify) return 'clarify';
  if (v.constraints.require_human_review || v.escalation) return 'escalate';
  return 'execute';
}

/**
 * What checking one cited evidence item found. `other-repo` is a hard REJECT (the actor cites work
 * on a different repository than it wants to touch); `failed` sends the proposal back for
 * clarification; `unverifiable` only lowers the model's confidence.
 */
export const EVIDENCE_STATUSES = ['verified', 'failed', 'unverifiable', 'other-repo'] as const;
export type EvidenceStatus = (typeof EVIDENCE_STATUSES)[number];

/**
 * ApplicationFailure types that cross the activity boundary and end Updates. Each error class in
 * `errors.ts` names one; the workflow's `nonRetryableErrorTypes` come from this set.
 */
export const FailureType = {
  /** Input that breaks a contract. */
  BadInput: 'BadInput',
  /** The policy is missing or malformed. */
  BadPolicy: 'BadPolicy',
  /** The same proposal content was submitted again. */
  DuplicateProposal: 'DuplicateProposal',
  /** No such proposal (visibility may lag: retryable). */
  NotFound: 'NotFound',
  /** The Temporal CLI could not be found or installed. */
  TemporalCli: 'TemporalCli',
  /** An executor refused an action that breaks the verdict's constraints or its guards. */
  ExecutionRefused: 'ExecutionRefused',
  /** A notification channel refused delivery for a reason a retry will not fix. */
  DeliveryRefused: 'DeliveryRefused',
  /** The circle registry refused an operation; `details[0]` is the refusal code. */
  CircleRefused: 'CircleRefused',
  /** A message into a proposal that is not allowed now (not authorized, not waiting). */
  Refused: 'Refused',
  /** A run's chosen proposal_id is held by other content: the run is withdrawn, nothing of it is performed. */
  ProposalIdTaken: 'ProposalIdTaken',
  /** A per-agent limit refused the request (`LimitExceededError`: which limit, when it resets). */
  LimitExceeded: 'LimitExceeded',
  /**
   * An audit log, the archive's index or an archived history is damaged (a broken line, a file that no longer matches
   * its hash): a person must look (`agent-judge audit verify`); appending after the damage would hide it.
   */
  AuditDamaged: 'AuditDamaged',
  /** A broken invariant of our own code; retrying may help after a deploy. */
  Internal: 'Internal',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Failure types no retry can fix: activities fail at once, the workflow never retries them. */
export const NON_RETRYABLE_FAILURE_TYPES: readonly FailureType[] = [
  FailureType.BadInput,
  FailureType.BadPolicy,
  FailureType.DuplicateProposal,
  FailureType.TemporalCli,
  FailureType.ExecutionRefused,
  FailureType.DeliveryRefused,
  FailureType.CircleRefused,
  FailureType.Refused,
  FailureType.ProposalIdTaken,
  FailureType.LimitExceeded,
  FailureType.AuditDamaged,
];

export function isRetryableFailureType(type: FailureType): boolean {
  return !NON_RETRYABLE_FAILURE_TYPES.includes(type);
}
