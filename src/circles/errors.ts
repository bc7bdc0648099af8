import { AgentJudgeError } from '../contracts/errors';
import { FailureType } from '../contracts/lifecycle';

/**
 * The registry refused an operation (a forged membership statement, an unknown agent, a decision
 * out of turn...). `code` is stable for scripts; the message says why. The CLI exits 1.
 */
export class CircleRefusedError extends AgentJudgeError {
  override readonly failureType: FailureType = FailureType.CircleRefused;

  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}
