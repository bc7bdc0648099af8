/** Reading the activity failures the proposal workflow meets. */
import { ApplicationFailure } from '@temporalio/workflow';
import { FailureType } from '../../contracts/lifecycle';
import { innermostMessage } from '../../contracts/innermost-message';

/** The innermost message of an activity failure, for verdict reasons and execution errors. */
export function failureMessage(err: unknown): string {
  return innermostMessage(err).slice(0, 500);
}

/** An activity failure that says the run's chosen proposal_id is held by other content. */
export function isProposalIdTaken(err: unknown): boolean {
  let e = err as { cause?: unknown; type?: unknown } | undefined;
  while (e && typeof e === 'object') {
    if (e instanceof ApplicationFailure && e.type === FailureType.ProposalIdTaken) return true;
    e = e.cause as typeof e;
  }
  return false;
}
