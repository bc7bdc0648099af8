/**
 * The actor-runtime API: submit a proposal, follow it, clarify it, decide it. The CLI is a thin
 * layer over these functions; agent runtimes call them directly.
 */
import { applyActionEdits } from '../contracts/action-edit';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowStartOptions,
} from '@temporalio/client';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common';
import {
  ClarificationSchema,
  HumanDecisionSchema,
  type Clarification,
  type HumanDecision,
} from '../contracts/messages';
import { parseProposal, searchableTarget, type Proposal } from '../contracts/proposal';
import { FINAL_STAGES, OUTCOME_STATUSES, outcomeStatusOf, stageFrom } from '../contracts/lifecycle';
import { outcomeOf, type OutcomeStatus, type ProposalOutcome, type ProposalStatus } from '../contracts/status';
import { describeIssues } from '../contracts/zod-error';
import { proposalContentDigest, proposalWorkflowId } from '../contracts/digest';
import { PROPOSAL_ID_RE, workflowIdNamedBy } from '../contracts/workflow-ids';
import { AgentJudgeError, BadInputError, DuplicateProposalError, NotFoundError } from '../contracts/errors';
import {
  awaitSettledUpdate,
  clarifyUpdate,
  DEFAULT_TASK_QUEUES,
  humanDecisionUpdate,
  PROPOSAL_ID_CLAIM_PREFIX,
  PROPOSAL_ID_CLAIM_TASK_QUEUE,
  PROPOSAL_ID_CLAIM_WORKFLOW_TYPE,
  PROPOSAL_WORKFLOW_TYPE,
  SA,
  statusQuery,
  withdrawUpdate,
} from '../names';
import type { proposalWorkflow } from '../workflows/proposal';
import type { SettleClaim } from '../contracts/capability';
import type { KeyFile } from '../contracts/identity';
import type { DecisionBinding } from '../identity/decision';
import { signDecision } from '../identity/sign-decision';
import { grpcCode, GrpcStatus } from './grpc';
import { checkSubmissionLimits, type SubmissionLimits } from './limits';

export { proposalWorkflowId };

/** A proposal, decision or clarification the workflow refused (not authorized, not waiting...). */
export class RefusedError extends AgentJudgeError {}

export interface SubmitOptions {
  /** The workflow task queue (default `agent-judge`). */
  taskQueue?: string;
  /** The per-agent limits to hold the proposal to (src/client/limits.ts); unchecked without. */
  limits?: SubmissionLimits;
}

/**
 * Everything both ways of submitting share: validation, the content-derived workflow id, the
 * proposal_id claim and the start options (duplicate content refused by Temporal itself).
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
  prepared: { proposal: Proposal; workflowId: string; reserve: boolean },
  start: (reuse: WorkflowIdReusePolicy) => Promise<T>,
): Promise<T> {
  const { proposal, workflowId } = prepared;
  const reserving = prepared.reserve
    ? claimProposalId(client, proposal.proposal_id, workflowId).then(
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

/**
 * Claims `proposalId` for the content whose workflow id is `workflowId`, or refuses with the
 * proposal that holds it. A visibility query cannot do this: two proposals sent at the same moment
 * both find nothing and both start. A workflow id is the one thing Temporal keeps unique, so the
 * claim is a start of `proposal-id-claim-<proposal_id>` that is never run (no worker polls its
 * queue; its start delay outlasts its one-second timeout, so no task is ever made) and closes as
 * timed out, holding the id until the namespace's retention deletes it, as long as the proposal's
 * own run is kept. Its memo names the content it was claimed for: the same content passes (and
 * meets the duplicate-content refusal of its own start, or starts if an earlier start failed).
 * Cost: one start call (no worker, two history events) in place of the visibility query; a
 * describe only when the id is taken. Measured (docs/performance.md, `npm run bench`'s claim row): ~8 ms of server
 * CPU per submission, a third of a lightweight proposal's; exported for that bench row.
 */
export async function claimProposalId(client: Client, proposalId: string, workflowId: string): Promise<void> {
  const claimId = `${PROPOSAL_ID_CLAIM_PREFIX}${proposalId}`;
  try {
    await client.workflow.start(PROPOSAL_ID_CLAIM_WORKFLOW_TYPE, {
      workflowId: claimId,
      taskQueue: PROPOSAL_ID_CLAIM_TASK_QUEUE,
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      workflowExecutionTimeout: '1s',
      startDelay: '1h',
      memo: { workflow_id: workflowId },
    });
    return;
  } catch (err) {
    if (!isDuplicateStart(err)) throw err;
  }
  // Taken: by this same content (a resubmission, or a retry after a start that failed), or not.
  const memo = await client.workflow
    .getHandle(claimId)
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
): Promise<void> {
  const held = await client.workflow
    .getHandle(`${PROPOSAL_ID_CLAIM_PREFIX}${proposalId}`)
    .describe()
    .then(
      (d) => d.memo?.workflow_id,
      (err: unknown) => {
        if (isClosedRunError(err)) return undefined;
        throw err;
      },
    );
  if (held === workflowId) return;
  if (held === undefined) return claimProposalId(client, proposalId, workflowId);
  throw new BadInputError(
    `proposal.proposal_id: ${proposalId} is already used by another proposal` +
      `${typeof held === 'string' ? ` (${held})` : ''}; give a revision a new proposal_id`,
  );
}

/** A start refused because a run with this content-derived id exists or existed: a resubmission. */
function isDuplicateStart(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError || grpcCode(err) === GrpcStatus.ALREADY_EXISTS;
}

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
    /** For an action the caller performs: an approval comes back redeemed and claimed (see {@link SettleClaim}). */
    claim?: SettleClaim;
  } = {},
): Promise<{ outcome: ProposalOutcome; status: ProposalStatus | null }> {
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
        args: options.claim ? [options.claim] : [],
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

/** Returns once the proposal is finished or waiting on a person or the actor. */
export async function waitUntilSettled(client: Client, workflowId: string): Promise<ProposalOutcome> {
  const handle = client.workflow.getHandle<typeof proposalWorkflow>(workflowId);
  try {
    // By name: the SDK's overloads take no definition whose argument is optional (the MCP proxy's claim, unused here).
    return outcomeOf(await handle.executeUpdate<ProposalStatus, []>(awaitSettledUpdate.name));
  } catch (err) {
    // The run may have closed before the Update arrived: its result is the outcome.
    if (err instanceof WorkflowUpdateFailedError || isClosedRunError(err)) return resultOf(client, workflowId);
    throw err;
  }
}

/**
 * An Update on a run that has closed, before it arrived or while it was in flight: the server
 * answers NOT_FOUND, which the SDK raises as {@link WorkflowNotFoundError}.
 */
function isClosedRunError(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError || grpcCode(err) === GrpcStatus.NOT_FOUND;
}

async function resultOf(client: Client, workflowId: string): Promise<ProposalOutcome> {
  try {
    return await client.workflow.getHandle<typeof proposalWorkflow>(workflowId).result();
  } catch (err) {
    if (err instanceof WorkflowFailedError) {
      throw new AgentJudgeError(`proposal workflow ${workflowId} failed: ${err.cause?.message ?? err.message}`);
    }
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

/** The workflow id a chosen proposal_id's reservation names, or null when there is none. */
async function reservationHolder(client: Client, proposalId: string): Promise<string | null> {
  const memo = await client.workflow
    .getHandle(`${PROPOSAL_ID_CLAIM_PREFIX}${proposalId}`)
    .describe()
    .then(
      (d) => d.memo?.workflow_id,
      () => undefined,
    );
  return typeof memo === 'string' ? memo : null;
}

async function requireWorkflowId(client: Client, id: string): Promise<string> {
  const wf = await findWorkflowId(client, id);
  if (!wf) throw new NotFoundError(`no proposal with id ${id}`);
  return wf;
}

/** The full status of a proposal (stage, verdicts, clarify rounds, deadlines, execution). */
export async function getStatus(client: Client, id: string): Promise<ProposalStatus> {
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
    if (!edit.ok) throw new BadInputError(edit.error);
    return { ...binding, editedSha256: edit.edited.to_digest };
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

export interface ListedProposal {
  proposal_id: string;
  workflow_id: string;
  status: OutcomeStatus;
  agent_id: string | null;
  action_type: string | null;
  tier: string | null;
  verdict: string | null;
  target: string | null;
  audit_flag: boolean;
  started_at: string;
  closed_at: string | null;
}

/** The visibility clause for one outcome status: the inverse of `outcomeStatusOf`. */
function statusClause(status: OutcomeStatus): string {
  const stage = SA.Stage.name;
  const list = (stages: readonly string[]) => stages.map((x) => `'${x}'`).join(', ');
  switch (status) {
    case 'pending':
      return `${stage} IN ('judging', 'executing') AND ExecutionStatus = 'Running'`;
    case 'awaiting_clarification':
    case 'awaiting_human':
      return `${stage} = '${status}' AND ExecutionStatus = 'Running'`;
    case 'failed':
      // A run that closed before a final stage (terminated, timed out) failed, whatever it awaited.
      return `(${stage} = 'failed' OR (ExecutionStatus != 'Running' AND ${stage} NOT IN (${list(FINAL_STAGES)})))`;
    default:
      return `${stage} = '${status}'`;
  }
}

/** Proposals from visibility, newest first; filters by status and start time. */
export async function listProposals(
  client: Client,
  {
    status,
    sinceMs,
    limit = 1000,
    auditFlag,
    taskQueue,
  }: {
    status?: string;
    sinceMs?: number;
    limit?: number;
    auditFlag?: boolean;
    /** Only proposals started on this workflow task queue (one deployment's, when several share a namespace). */
    taskQueue?: string;
  } = {},
): Promise<ListedProposal[]> {
  const clauses = [`WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}'`];
  if (status !== undefined) {
    if (!OUTCOME_STATUSES.includes(status as OutcomeStatus)) {
      throw new BadInputError(`--status: expected one of ${OUTCOME_STATUSES.join(', ')}`);
    }
    clauses.push(statusClause(status as OutcomeStatus));
  }
  if (sinceMs !== undefined) clauses.push(`StartTime > '${new Date(Date.now() - sinceMs).toISOString()}'`);
  if (auditFlag) clauses.push(`${SA.AuditFlag.name} = true`);
  if (taskQueue !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(taskQueue))
      throw new BadInputError(`taskQueue: expected letters, digits, dots, dashes or underscores, got ${taskQueue}`);
    clauses.push(`TaskQueue = '${taskQueue}'`);
  }
  const rows: ListedProposal[] = [];
  for await (const wf of client.workflow.list({ query: clauses.join(' AND ') })) {
    const sa = wf.typedSearchAttributes;
    const closed = wf.closeTime !== undefined;
    rows.push({
      proposal_id: sa.get(SA.ProposalId) ?? '',
      workflow_id: wf.workflowId,
      status: outcomeStatusOf(stageFrom(sa.get(SA.Stage)), closed),
      agent_id: sa.get(SA.AgentId) ?? null,
      action_type: sa.get(SA.ActionType) ?? null,
      tier: sa.get(SA.Tier) ?? null,
      verdict: sa.get(SA.Verdict) ?? null,
      target: sa.get(SA.Target) ?? null,
      audit_flag: sa.get(SA.AuditFlag) ?? false,
      started_at: wf.startTime.toISOString(),
      closed_at: wf.closeTime?.toISOString() ?? null,
    });
    if (rows.length >= limit) break;
  }
  return rows;
}
