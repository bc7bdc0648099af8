/** Answering a proposal: the actor's clarification, a person's decision (signed when a key is given). */
import { type Client, WorkflowUpdateFailedError } from '@temporalio/client';
import { applyActionEdits } from '../../contracts/action-edit';
import { proposalContentDigest } from '../../contracts/digest';
import { BadInputError, NotFoundError } from '../../contracts/errors';
import type { KeyFile } from '../../contracts/identity';
import { refusalError } from '../../contracts/refusal';
import {
  ClarificationSchema,
  HumanDecisionSchema,
  type Clarification,
  type HumanDecision,
} from '../../contracts/messages';
import { outcomeOf, type ProposalOutcome } from '../../contracts/status';
import { describeIssues } from '../../contracts/zod-error';
import type { DecisionBinding } from '../../identity/decision';
import { signDecision } from '../../identity/sign-decision';
import { clarifyUpdate, humanDecisionUpdate, statusQuery } from '../../names';
import { requireWorkflowId } from './follow';
import { isClosedRunError, RefusedError, resultOf } from './runs';

/**
 * Turns a failed decision or clarification Update into what the caller sees. NOT_FOUND on a
 * workflow id that exists means its run has closed: if it closed after the Update was sent, the
 * Update was in flight and may have taken effect, so the final outcome is the answer; if it had
 * closed before, the Update is refused.
 */
async function refusal(
  err: unknown,
  what: string,
  client: Client,
  workflowId: string,
  sentAt: number,
): Promise<ProposalOutcome> {
  if (err instanceof WorkflowUpdateFailedError) {
    throw new RefusedError(`${what} refused: ${err.cause?.message ?? err.message}`);
  }
  if (!isClosedRunError(err)) throw err;
  let closedAt: number | undefined;
  try {
    closedAt = (await client.workflow.getHandle(workflowId).describe()).closeTime?.getTime();
  } catch (describeErr) {
    if (isClosedRunError(describeErr)) throw new NotFoundError(`${what} refused: no such proposal`);
    throw describeErr;
  }
  if (closedAt !== undefined && closedAt >= sentAt) return resultOf(client, workflowId);
  throw new RefusedError(`${what} refused: the proposal is already closed`);
}

/** Answers a CLARIFY; returns the outcome after the proposal was judged again. */
export async function clarify(client: Client, id: string, input: unknown): Promise<ProposalOutcome> {
  const parsed = ClarificationSchema.safeParse(input);
  if (!parsed.success) throw new BadInputError(describeIssues('clarification', parsed.error.issues));
  const clarification: Clarification = parsed.data;
  const workflowId = await requireWorkflowId(client, id);
  const sentAt = Date.now();
  try {
    return outcomeOf(
      await client.workflow.getHandle(workflowId).executeUpdate(clarifyUpdate, { args: [clarification] }),
    );
  } catch (err) {
    return refusal(err, 'clarification', client, workflowId, sentAt);
  }
}

/**
 * What a signature made now for this proposal binds: read from the run it is sent to (the chain's
 * first execution run id, and the content digest of the proposal that run holds), so a signature
 * never covers a run or content other than the one decided on.
 */
export async function decisionBindingOf(
  client: Client,
  workflowId: string,
  edits?: HumanDecision['edits'],
): Promise<DecisionBinding> {
  const handle = client.workflow.getHandle(workflowId);
  try {
    const [description, status] = await Promise.all([handle.describe(), handle.query(statusQuery)]);
    const runId = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
    const binding = { workflowId, runId, contentSha256: proposalContentDigest(status.proposal) };
    if (!edits) return binding;
    // The edited action's digest, computed from the proposal as the run holds it: what the signature binds.
    const edit = applyActionEdits(status.proposal, edits);
    if (!edit.ok) throw refusalError(edit.refusal);
    return { ...binding, editedSha256: edit.value.edited.to_digest };
  } catch (err) {
    if (isClosedRunError(err)) throw new NotFoundError(`no proposal with id ${workflowId}`);
    throw err;
  }
}

/**
 * A person's decision on an escalated proposal; returns the outcome after it took effect. With
 * `key`, the decision is signed for this proposal's content and workflow run.
 */
export async function decide(
  client: Client,
  id: string,
  input: unknown,
  options: { key?: KeyFile } = {},
): Promise<ProposalOutcome> {
  const parsed = HumanDecisionSchema.safeParse(input);
  if (!parsed.success) throw new BadInputError(describeIssues('decision', parsed.error.issues));
  const workflowId = await requireWorkflowId(client, id);
  const decision: HumanDecision = options.key
    ? signDecision(await decisionBindingOf(client, workflowId, parsed.data.edits), parsed.data, options.key)
    : parsed.data;
  const sentAt = Date.now();
  try {
    return outcomeOf(
      await client.workflow.getHandle(workflowId).executeUpdate(humanDecisionUpdate, { args: [decision] }),
    );
  } catch (err) {
    return refusal(err, 'decision', client, workflowId, sentAt);
  }
}
