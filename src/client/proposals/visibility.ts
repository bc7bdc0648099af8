/** Proposals as visibility lists them: by status, start time, audit flag and task queue. */
import type { Client } from '@temporalio/client';
import { BadInputError } from '../../contracts/errors';
import { FINAL_STAGES, OUTCOME_STATUSES, outcomeStatusOf, stageFrom } from '../../contracts/lifecycle';
import type { OutcomeStatus } from '../../contracts/status';
import { PROPOSAL_WORKFLOW_TYPE, SA } from '../../names';

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
