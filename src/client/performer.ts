/**
 * What the performer of a caller-performed proposal (a runtime's gate: the MCP proxy, a coding-agent hook) says to
 * its proposal, and reads back from it. The workflow side is `awaitCallerOutcome` in
 * src/workflows/proposal/workflow.ts; the gate (src/gate/) is the one caller, through these functions only (never a
 * workflow handle of its own).
 */
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { CallerOutcome } from '../contracts/caller-outcome';
import { NotFoundError } from '../contracts/errors';
import type { ProposalOutcome, ProposalRecord } from '../contracts/status';
import { callerOutcomeUpdate, statusQuery } from '../names';
import type { proposalWorkflow } from '../workflows/proposal';
import { grpcCode, GrpcStatus } from './grpc';

/**
 * Records what the performer did with an approved action: `forwarding` leases the one performance (a second lease is
 * refused by the workflow's validator), then one final outcome (`ok`, `tool_error`, `upstream_failure`, `abandoned`).
 * Rejects with the SDK's `WorkflowUpdateFailedError` when the workflow refuses it.
 */
export async function reportCallerOutcome(
  client: Client,
  workflowId: string,
  outcome: CallerOutcome,
): Promise<ProposalRecord> {
  return client.workflow.getHandle(workflowId).executeUpdate(callerOutcomeUpdate, { args: [outcome] });
}

/** The status of the proposal run under `workflowId` (a Query: the run may be open or closed). */
export async function statusOfRun(client: Client, workflowId: string): Promise<ProposalRecord> {
  try {
    return await client.workflow.getHandle(workflowId).query(statusQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError || grpcCode(err) === GrpcStatus.NOT_FOUND)
      throw new NotFoundError(`no proposal run ${workflowId}`);
    throw err;
  }
}

/**
 * Where the run under `workflowId` stands, for a gate that found its start refused as a duplicate: open, closed with
 * its outcome (null when the run failed, was terminated or timed out: it ended without a decision), and the
 * execution status Temporal names.
 */
export async function runState(
  client: Client,
  workflowId: string,
): Promise<{ execution: string; outcome: ProposalOutcome | null }> {
  const handle = client.workflow.getHandle<typeof proposalWorkflow>(workflowId);
  const execution = (await handle.describe()).status.name;
  if (execution !== 'COMPLETED') return { execution, outcome: null };
  // Closed runs answer from their result: no worker needed to replay them.
  return { execution, outcome: await handle.result().catch(() => null) };
}
