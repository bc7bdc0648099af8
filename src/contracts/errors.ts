/**
 * The project's error family. Each class names its ApplicationFailure type (one set, in
 * `lifecycle.ts`) and whether a retry can help; the activity boundary maps a thrown error to that
 * type (src/activities/failures.ts), and the CLI maps it to an exit code: bad input is 2, else 1.
 */
import { FailureType, isRetryableFailureType } from './lifecycle';

export class AgentJudgeError extends Error {
  /** The ApplicationFailure type this error becomes when it leaves an activity. */
  readonly failureType: FailureType = FailureType.Internal;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** False when a retry would fail the same way: the activity fails at once. */
  get retryable(): boolean {
    return isRetryableFailureType(this.failureType);
  }
}

/** Input that breaks a contract. Never retried; the CLI exits 2. */
export class BadInputError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.BadInput;
}

/** The policy file is missing or malformed; nothing starts until it is fixed. */
export class PolicyError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.BadPolicy;
}

/** An identical proposal already exists (REJECT is final; revise the proposal instead). */
export class DuplicateProposalError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.DuplicateProposal;

  constructor(
    message: string,
    readonly workflowId: string,
  ) {
    super(message);
  }
}

/** No proposal with that id is known to the Temporal service. */
export class NotFoundError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.NotFound;
}

/** The Temporal CLI could not be found or installed. */
export class TemporalCliError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.TemporalCli;
}

/** An executor refused an action because it breaks the verdict's constraints or its own guards. */
export class ExecutionRefusedError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.ExecutionRefused;
}

/** A notification channel refused delivery for a reason a retry will not fix (bad channel, token). */
export class DeliveryRefusedError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.DeliveryRefused;
}

/** An audit log or archived history is damaged; never retried, a person runs `agent-judge audit verify`. */
export class AuditDamagedError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.AuditDamaged;
}

/**
 * A search attribute this project writes exists on the namespace with another type (registered by hand or by an
 * older build): writes to it would fail every workflow task that sets it. The worker refuses to start (exit 2).
 */
export class SearchAttributeTypeError extends BadInputError {}

/** The per-agent limits of `spec.limits` and `spec.memory` (docs/security.md, Per-agent limits). */
export const LIMIT_NAMES = [
  'proposals_per_agent',
  'pending_escalations_per_agent',
  'memory_store',
  'memory_store_bytes',
] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/**
 * A per-agent limit refused a request: which limit, and when it resets (an ISO time; null when only the operator can
 * lift it, or when it lifts as the agent's waiting proposals are decided). Never retried as such; the CLI exits 4.
 */
export class LimitExceededError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.LimitExceeded;

  constructor(
    readonly limit: LimitName,
    readonly resetsAt: string | null,
    message: string,
  ) {
    super(message);
  }
}
