/**
 * What a proposal run's answers mean to the client: a start refused as a duplicate, an Update on a run that has
 * closed, the result of a closed run, and a refusal by the workflow. Shared by submit, follow and decide.
 */
import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { AgentJudgeError } from '../../contracts/errors';
import type { ProposalOutcome } from '../../contracts/status';
import type { proposalWorkflow } from '../../workflows/proposal';
import { grpcCode, GrpcStatus } from '../grpc';

/** A proposal, decision or clarification the workflow refused (not authorized, not waiting...). */
export class RefusedError extends AgentJudgeError {}

/** A start refused because a run with this content-derived id exists or existed: a resubmission. */
export function isDuplicateStart(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError || grpcCode(err) === GrpcStatus.ALREADY_EXISTS;
}

/**
 * An Update on a run that has closed, before it arrived or while it was in flight: the server
 * answers NOT_FOUND, which the SDK raises as {@link WorkflowNotFoundError}.
 */
export function isClosedRunError(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || grpcCode(err) === GrpcStatus.NOT_FOUND;
}

/** The outcome a closed run returned; a failed run is an error naming why. */
export async function resultOf(client: Client, workflowId: string): Promise<ProposalOutcome> {
  try {
    return await client.workflow.getHandle<typeof proposalWorkflow>(workflowId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      throw new AgentJudgeError(`proposal workflow ${workflowId} failed: ${err.cause?.message ?? err.message}`);
    }
    throw err;
  }
}
