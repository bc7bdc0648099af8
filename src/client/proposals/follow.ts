/** Following a proposal: finding its run by proposal_id, its status and outcome, waiting until it settles. */
import { type Client, WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { BadInputError, NotFoundError } from '../../contracts/errors';
import { outcomeOf, type ProposalOutcome, type ProposalRecord } from '../../contracts/status';
import { PROPOSAL_ID_RE, workflowIdNamedBy } from '../../contracts/workflow-ids';
import { awaitSettledUpdate, PROPOSAL_WORKFLOW_TYPE, SA, statusQuery } from '../../names';
import type { proposalWorkflow } from '../../workflows/proposal';
import { reservationHolder } from './reservation';
import { isClosedRunError, resultOf } from './runs';

/** Returns once the proposal is finished or waiting on a person or the actor. */
export async function waitUntilSettled(client: Client, workflowId: string): Promise<ProposalOutcome> {
  const handle = client.workflow.getHandle<typeof proposalWorkflow>(workflowId);
  try {
    // By name: the SDK's overloads take no definition whose argument is optional (the MCP proxy's lease, unused here).
    return outcomeOf(await handle.executeUpdate<ProposalRecord, []>(awaitSettledUpdate.name));
  } catch (err) {
    // The run may have closed before the Update arrived: its result is the outcome.
    if (err instanceof WorkflowUpdateFailedError || isClosedRunError(err)) return resultOf(client, workflowId);
    throw err;
  }
}

/**
 * Finds a proposal's workflow id from its proposal_id. A workflow id, or a proposal_id derived from content
 * (`mcp-<32 hex>`), names its workflow id without a lookup.
 */
export async function findWorkflowId(
  client: Client,
  idOrWorkflowId: string,
  { retries = 8 }: { retries?: number } = {},
): Promise<string | null> {
  const named = workflowIdNamedBy(idOrWorkflowId);
  if (named !== null) return named;
  if (!PROPOSAL_ID_RE.test(idOrWorkflowId)) {
    throw new BadInputError(`proposal_id: ${JSON.stringify(idOrWorkflowId)} is not a valid proposal id`);
  }
  // Visibility is eventually consistent: a proposal submitted a moment ago may take a beat to show.
  for (let attempt = 0; ; attempt++) {
    const found: string[] = [];
    for await (const wf of client.workflow.list({
      query: `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ${SA.ProposalId.name} = '${idOrWorkflowId}'`,
      pageSize: 20,
    })) {
      found.push(wf.workflowId);
      if (found.length >= 20) break;
    }
    // Two runs carry one proposal_id (a run whose reservation was refused, before its withdrawal, or one started
    // around the client): the reservation names the proposal that holds it. Without one, never guess.
    if (found.length > 1) {
      const holder = await reservationHolder(client, idOrWorkflowId);
      if (holder !== null && found.includes(holder)) return holder;
      throw new BadInputError(
        `proposal_id ${idOrWorkflowId} names more than one proposal (${found.join(', ')}); use the workflow id instead`,
      );
    }
    if (found[0]) return found[0];
    if (attempt >= retries) return null;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The workflow id of `id` (a proposal_id or workflow id), or {@link NotFoundError}. */
export async function requireWorkflowId(client: Client, id: string): Promise<string> {
  const wf = await findWorkflowId(client, id);
  if (!wf) throw new NotFoundError(`no proposal with id ${id}`);
  return wf;
}

/** The full status of a proposal (stage, verdicts, clarify rounds, deadlines, execution). */
export async function getStatus(client: Client, id: string): Promise<ProposalRecord> {
  const workflowId = await requireWorkflowId(client, id);
  try {
    return await client.workflow.getHandle(workflowId).query(statusQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) throw new NotFoundError(`no proposal with id ${id}`);
    throw err;
  }
}

export async function getOutcome(client: Client, id: string): Promise<ProposalOutcome> {
  return outcomeOf(await getStatus(client, id));
}
