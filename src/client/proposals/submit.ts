/**
 * Submitting a proposal: validated, named by its content, started under that name (a duplicate refused by Temporal
 * itself), a chosen proposal_id reserved beside the start; or started and followed until settled in one call.
 */
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowUpdateFailedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import type { SettleLease } from '../../contracts/capability';
import { proposalWorkflowId } from '../../contracts/digest';
import { BadInputError, DuplicateProposalError } from '../../contracts/errors';
import { parseProposal, searchableTarget, type Proposal } from '../../contracts/proposal';
import { outcomeOf, type ProposalOutcome, type ProposalRecord } from '../../contracts/status';
import { workflowIdNamedBy } from '../../contracts/workflow-ids';
import { awaitSettledUpdate, DEFAULT_TASK_QUEUES, PROPOSAL_WORKFLOW_TYPE, SA, withdrawUpdate } from '../../names';
import type { proposalWorkflow } from '../../workflows/proposal';
import { checkSubmissionLimits, type SubmissionLimits } from '../limits';
import { fairnessKeyFor } from './fairness';
import { reserveProposalId } from './reservation';
import { isClosedRunError, isDuplicateStart, resultOf } from './runs';
import { proposalSubject, SUBJECT_MEMO_KEY } from '../../contracts/subject';

export interface SubmitOptions {
  /** The workflow task queue (default `agent-judge`). */
  taskQueue?: string;
  /** The per-agent limits to hold the proposal to (src/client/limits.ts); unchecked without. */
  limits?: SubmissionLimits;
}

/**
 * Everything both ways of submitting share: validation, the content-derived workflow id, the
 * proposal_id reservation and the start options (duplicate content refused by Temporal itself).
 */
function prepareStart(
  input: unknown,
  options: SubmitOptions,
): {
  proposal: Proposal;
  workflowId: string;
  /** A chosen proposal_id, reserved beside the start (see {@link startReserved}); false when it names the content. */
  reserve: boolean;
  start: WorkflowStartOptions<typeof proposalWorkflow>;
} {
  const proposal = parseNamedProposal(input);
  const workflowId = proposalWorkflowId(proposal);
  const named = workflowIdNamedBy(proposal.proposal_id);
  // Named by its content: unique as its workflow id is, so no reservation (a third of a lightweight proposal's server
  // CPU saved). Any other id is reserved, beside the start.
  if (named !== null && named !== workflowId) {
    throw new BadInputError(
      `proposal.proposal_id: ${proposal.proposal_id} has a form kept for names derived from a proposal's content ` +
        `(proposal-<32 hex>, mcp-<32 hex>, call-<32 hex>) but names ${named}, not this proposal (${workflowId}); ` +
        `use ${workflowId}, leave proposal_id out to get it, or choose an id of another form`,
    );
  }
  const start: WorkflowStartOptions<typeof proposalWorkflow> = {
    workflowId,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow,
    args: [{ proposal }],
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    typedSearchAttributes: [
      { key: SA.ProposalId, value: proposal.proposal_id },
      { key: SA.AgentId, value: proposal.agent_id },
      { key: SA.ActionType, value: proposal.action_type },
      { key: SA.Target, value: searchableTarget(proposal) },
      { key: SA.Stage, value: 'judging' },
    ],
    // What an approver is asked about (the command, path or URL), readable from visibility by `list`.
    memo: { [SUBJECT_MEMO_KEY]: proposalSubject(proposal) },
    // One agent's backlog is dispatched in turn with another's, not ahead of it (./fairness.ts); its activities
    // inherit the key. A server without fairness enabled ignores it.
    priority: { fairnessKey: fairnessKeyFor(proposal.agent_id) },
  };
  return { proposal, workflowId, reserve: named === null, start };
}

/**
 * Starts a proposal (`start`, given the reuse policy to start with) and, for a chosen proposal_id, reserves the id
 * BESIDE the start instead of before it (docs/performance.md §6): both requests are in flight at once, so the chosen id
 * costs no sequential round trip. Nothing is returned until both succeeded. When the reservation is refused (the id is
 * held by other content) or cannot be confirmed, the run that started is withdrawn (the `withdraw` Update: it ends
 * refused, its token can never be redeemed, its proposal_id stops naming it) and the reservation's error is thrown.
 * Agent-judge's executor confirms the reservation itself before it acts, so nothing of a refused run is performed
 * even when this client dies before the withdrawal.
 *
 * A start refused as a duplicate of a run that was withdrawn (that same content, submitted before under an id it could
 * not hold) starts again once: the withdrawn run failed, and only then is a failed run's id reused.
 */
async function startReserved<T>(
  client: Client,
  prepared: { proposal: Proposal; workflowId: string; reserve: boolean; start: { taskQueue: string } },
  start: (reuse: WorkflowIdReusePolicy) => Promise<T>,
): Promise<T> {
  const { proposal, workflowId } = prepared;
  const reserving = prepared.reserve
    ? reserveProposalId(client, proposal.proposal_id, workflowId, prepared.start.taskQueue).then(
        () => null,
        (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
      )
    : Promise.resolve(null);
  let started: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    started = { ok: true, value: await start(WorkflowIdReusePolicy.REJECT_DUPLICATE) };
  } catch (error) {
    started = { ok: false, error };
  }
  const refused = await reserving;
  if (refused !== null) {
    // A duplicate start started nothing; anything else may have started a run that must not stand.
    if (started.ok || !isDuplicateStart(started.error)) {
      const reason =
        refused instanceof BadInputError
          ? refused.message
          : `proposal.proposal_id: ${proposal.proposal_id} could not be reserved (${refused.message})`;
      await withdrawRun(client, workflowId, reason).catch(() => undefined);
    }
    throw refused;
  }
  if (started.ok) return started.value;
  if (isDuplicateStart(started.error) && (await wasWithdrawn(client, workflowId))) {
    return start(WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY);
  }
  throw started.error;
}

/** Ends a run whose chosen proposal_id is not its own (see the workflow's `withdraw` Update). */
async function withdrawRun(client: Client, workflowId: string, reason: string): Promise<void> {
  try {
    await client.workflow.getHandle(workflowId).executeUpdate(withdrawUpdate, { args: [{ reason }] });
  } catch (err) {
    // Closed already (a lightweight REJECT closes at once): nothing of it can be performed any more.
    if (!isClosedRunError(err)) throw err;
  }
}

/** True when the closed run under `workflowId` was withdrawn: it failed and no longer carries a proposal_id. */
async function wasWithdrawn(client: Client, workflowId: string): Promise<boolean> {
  const d = await client.workflow
    .getHandle(workflowId)
    .describe()
    .catch(() => null);
  return d?.status.name === 'FAILED' && d.typedSearchAttributes.get(SA.ProposalId) === undefined;
}

/**
 * A proposal without a proposal_id is named by its content: its proposal_id becomes its workflow id (the content
 * fingerprint never includes the proposal_id, so it can be computed first).
 */
function parseNamedProposal(input: unknown): Proposal {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || 'proposal_id' in input) {
    return parseProposal(input);
  }
  const unnamed = parseProposal({ ...input, proposal_id: UNNAMED });
  return { ...unnamed, proposal_id: proposalWorkflowId(unnamed) };
}
/** A valid proposal_id that only stands in while the content's name is computed. */
const UNNAMED = 'unnamed';

function duplicateError(workflowId: string): DuplicateProposalError {
  return new DuplicateProposalError(
    `an identical proposal was already submitted (${workflowId}); a proposal may not be retried: ` +
      'revise its scope or justification to submit a new one',
    workflowId,
  );
}

/** Validates and submits a proposal; starts nothing when it is malformed or a duplicate. */
export async function submitProposal(
  client: Client,
  input: unknown,
  options: SubmitOptions = {},
): Promise<{ proposal_id: string; workflow_id: string }> {
  const prepared = prepareStart(input, options);
  const { proposal, workflowId, start } = prepared;
  if (options.limits)
    await checkSubmissionLimits(client, proposal, { taskQueue: start.taskQueue, workflowId }, options.limits);
  try {
    await startReserved(client, prepared, (reuse) =>
      client.workflow.start<typeof proposalWorkflow>(PROPOSAL_WORKFLOW_TYPE, {
        ...start,
        workflowIdReusePolicy: reuse,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      }),
    );
  } catch (err) {
    if (isDuplicateStart(err)) throw duplicateError(workflowId);
    throw err;
  }
  return { proposal_id: proposal.proposal_id, workflow_id: workflowId };
}

/**
 * Submits and waits until the proposal is finished or waiting on someone, in ONE call:
 * Update-with-Start (the early-return pattern) starts the run and delivers `awaitSettled` in its
 * first workflow task, so the Update cannot arrive after the run has closed. The refusals of
 * {@link submitProposal} hold: conflict policy FAIL and reuse policy REJECT_DUPLICATE refuse
 * identical content whether its run is open or closed.
 */
export async function submitAndWait(
  client: Client,
  input: unknown,
  options: SubmitOptions = {},
): Promise<ProposalOutcome> {
  return (await submitAndSettle(client, input, options)).outcome;
}

/**
 * {@link submitAndWait}, also giving the full status the settling Update returned (null when the run closed first
 * and its result answered instead): a caller that needs more than the outcome (the MCP proxy) saves a Query.
 */
export async function submitAndSettle(
  client: Client,
  input: unknown,
  options: SubmitOptions & {
    /** For an action the caller performs: an approval comes back redeemed and leased (see {@link SettleLease}). */
    lease?: SettleLease;
  } = {},
): Promise<{ outcome: ProposalOutcome; status: ProposalRecord | null }> {
  const prepared = prepareStart(input, options);
  const { workflowId, start } = prepared;
  if (options.limits) {
    await checkSubmissionLimits(client, prepared.proposal, { taskQueue: start.taskQueue, workflowId }, options.limits);
  }
  try {
    const status = await startReserved(client, prepared, (reuse) =>
      client.workflow.executeUpdateWithStart(awaitSettledUpdate, {
        startWorkflowOperation: new WithStartWorkflowOperation<typeof proposalWorkflow>(PROPOSAL_WORKFLOW_TYPE, {
          ...start,
          workflowIdReusePolicy: reuse,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        }),
        args: options.lease ? [options.lease] : [],
      }),
    );
    return { outcome: outcomeOf(status), status };
  } catch (err) {
    if (isDuplicateStart(err)) throw duplicateError(workflowId);
    // The run closed before the Update completed (it failed its own validation, was terminated...):
    // its result is the outcome.
    if (err instanceof WorkflowUpdateFailedError || isClosedRunError(err))
      return { outcome: await resultOf(client, workflowId), status: null };
    throw err;
  }
}
