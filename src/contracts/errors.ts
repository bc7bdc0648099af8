/**
 * The project's error family. Each maps to an ApplicationFailure type at the activity boundary and
 * to a CLI exit code: bad input is 2, everything else 1.
 */
export class AgentJudgeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Input that breaks a contract. Never retried; the CLI exits 2. */
export class BadInputError extends AgentJudgeError {}

/** The policy file is missing or malformed; nothing starts until it is fixed. */
export class PolicyError extends AgentJudgeError {}

/** An identical proposal already exists (REJECT is final; revise the proposal instead). */
export class DuplicateProposalError extends AgentJudgeError {
  constructor(
    message: string,
    readonly workflowId: string,
  ) {
    super(message);
  }
}

/** No proposal with that id is known to the Temporal service. */
export class NotFoundError extends AgentJudgeError {}

/** The Temporal CLI could not be found or installed. */
export class TemporalCliError extends AgentJudgeError {}

/** An executor refused an action because it breaks the verdict's constraints or its own guards. */
export class ExecutionRefusedError extends AgentJudgeError {}
