/**
 * A chosen proposal_id, reserved for one proposal's content beside the run's start, confirmed by the executor
 * before it acts.
 */
import type { Client } from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import { BadInputError } from '../../contracts/errors';
import {
  DEFAULT_TASK_QUEUES,
  PROPOSAL_ID_RESERVATION_PREFIX,
  PROPOSAL_ID_RESERVATION_WORKFLOW_TYPE,
} from '../../names';
import { isClosedRunError, isDuplicateStart } from './runs';

/** How long after its start a reservation runs (and completes): past the submission's answer. */
const RESERVATION_START_DELAY = '2s';

/**
 * Reserves `proposalId` for the content whose workflow id is `workflowId`, or refuses with the
 * proposal that holds it. A visibility query cannot do this: two proposals sent at the same moment
 * both find nothing and both start. A workflow id is the one thing Temporal keeps unique, so the
 * reservation is a start of `proposal-id-reservation-<proposal_id>` (reuse policy REJECT_DUPLICATE: a closed
 * reservation holds the id too, until the namespace's retention deletes it, as long as the proposal's own run is
 * kept). Its memo names the content it was reserved for: the same content passes (and meets the duplicate-content
 * refusal of its own start, or starts if an earlier start failed). The run is started with a delay on the workflow
 * task queue (`taskQueue`), so the workflow worker completes it once the submission has its answer (the Temporal UI
 * shows it completed, not timed out) and its one workflow task never competes with the proposal's first.
 * Cost: one start call in place of the visibility query; a describe only when the id is taken (docs/performance.md,
 * `npm run bench`'s reservation row; exported for that bench row).
 */
export async function reserveProposalId(
  client: Client,
  proposalId: string,
  workflowId: string,
  taskQueue: string = DEFAULT_TASK_QUEUES.workflow,
): Promise<void> {
  const reservationId = `${PROPOSAL_ID_RESERVATION_PREFIX}${proposalId}`;
  try {
    await client.workflow.start(PROPOSAL_ID_RESERVATION_WORKFLOW_TYPE, {
      workflowId: reservationId,
      taskQueue,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      // Run once the submission is answered; still closed (timed out, holding the id) if no worker ever runs it.
      startDelay: RESERVATION_START_DELAY,
      workflowExecutionTimeout: '1d',
      memo: { workflow_id: workflowId },
    });
    return;
  } catch (err) {
    if (!isDuplicateStart(err)) throw err;
  }
  // Taken: by this same content (a resubmission, or a retry after a start that failed), or not.
  const memo = await client.workflow
    .getHandle(reservationId)
    .describe()
    .then((d) => d.memo?.workflow_id);
  if (memo === workflowId) return;
  throw new BadInputError(
    `proposal.proposal_id: ${proposalId} is already used by another proposal` +
      `${typeof memo === 'string' ? ` (${memo})` : ''}; give a revision a new proposal_id`,
  );
}

/**
 * What agent-judge's executor asks before it performs a proposal submitted under a chosen proposal_id: is the id
 * reserved for this proposal's content? Reads the reservation first (one describe; the submitting client sent it
 * beside the start, so it is there by the time an executor runs) and reserves it here only when it is not (the client
 * died before its reservation arrived). Throws {@link BadInputError} when other content holds the id.
 */
export async function confirmProposalIdReservation(
  client: Client,
  proposalId: string,
  workflowId: string,
  taskQueue?: string,
): Promise<void> {
  const held = await client.workflow
    .getHandle(`${PROPOSAL_ID_RESERVATION_PREFIX}${proposalId}`)
    .describe()
    .then(
      (d) => d.memo?.workflow_id,
      (err: unknown) => {
        if (isClosedRunError(err)) return undefined;
        throw err;
      },
    );
  if (held === workflowId) return;
  if (held === undefined) return reserveProposalId(client, proposalId, workflowId, taskQueue);
  throw new BadInputError(
    `proposal.proposal_id: ${proposalId} is already used by another proposal` +
      `${typeof held === 'string' ? ` (${held})` : ''}; give a revision a new proposal_id`,
  );
}

/** The workflow id a chosen proposal_id's reservation names, or null when there is none. */
export async function reservationHolder(client: Client, proposalId: string): Promise<string | null> {
  const memo = await client.workflow
    .getHandle(`${PROPOSAL_ID_RESERVATION_PREFIX}${proposalId}`)
    .describe()
    .then(
      (d) => d.memo?.workflow_id,
      () => undefined,
    );
  return typeof memo === 'string' ? memo : null;
}
