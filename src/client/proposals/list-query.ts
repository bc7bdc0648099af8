/**
 * What `list` asks visibility and how it reads the answer, shared by the SDK client (./visibility.ts) and the
 * read-only gRPC path of the CLI (../status-rpc.ts): one query, one row shape, whichever way it travels. Imports no
 * SDK module.
 */
import { BadInputError } from '../../contracts/errors';
import { FINAL_STAGES, OUTCOME_STATUSES, outcomeStatusOf, stageFrom } from '../../contracts/lifecycle';
import type { OutcomeStatus } from '../../contracts/status';
import { SUBJECT_MEMO_KEY } from '../../contracts/subject';
import { PROPOSAL_SEARCH_ATTRIBUTE_NAMES as SA, PROPOSAL_WORKFLOW_TYPE } from '../../wire-names';

export interface ListedProposal {
  proposal_id: string;
  workflow_id: string;
  status: OutcomeStatus;
  agent_id: string | null;
  action_type: string | null;
  tier: string | null;
  verdict: string | null;
  target: string | null;
  /** The command, path or URL an approver is asked about (src/contracts/subject.ts); null for runs without it. */
  subject: string | null;
  /**
   * `token`: approved, the run still open until its performer redeems the capability token (or reports what it did);
   * null otherwise.
   */
  waiting_for: 'token' | null;
  audit_flag: boolean;
  started_at: string;
  closed_at: string | null;
}

/** Which proposals to list. */
export interface ListOptions {
  status?: string;
  sinceMs?: number;
  limit?: number;
  auditFlag?: boolean;
  /** Only proposals started on this workflow task queue (one deployment's, when several share a namespace). */
  taskQueue?: string;
}

/** The visibility clause for one outcome status: the inverse of `outcomeStatusOf`. */
function statusClause(status: OutcomeStatus): string {
  const stage = SA.Stage;
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

/** The visibility query for `options`; throws {@link BadInputError} naming the option it refuses. */
export function proposalListQuery({ status, sinceMs, auditFlag, taskQueue }: ListOptions = {}): string {
  const clauses = [`WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}'`];
  if (status !== undefined) {
    if (!OUTCOME_STATUSES.includes(status as OutcomeStatus)) {
      throw new BadInputError(`--status: expected one of ${OUTCOME_STATUSES.join(', ')}`);
    }
    clauses.push(statusClause(status as OutcomeStatus));
  }
  if (sinceMs !== undefined) clauses.push(`StartTime > '${new Date(Date.now() - sinceMs).toISOString()}'`);
  if (auditFlag) clauses.push(`${SA.AuditFlag} = true`);
  if (taskQueue !== undefined) {
    if (!/^[A-Za-z0-9._-]{1,200}$/.test(taskQueue))
      throw new BadInputError(`taskQueue: expected letters, digits, dots, dashes or underscores, got ${taskQueue}`);
    clauses.push(`TaskQueue = '${taskQueue}'`);
  }
  return clauses.join(' AND ');
}

/** One listed run as either client reads it: its id, times and search attributes by name. */
export interface ListedRun {
  workflowId: string;
  startTime: Date;
  closeTime: Date | undefined;
  attribute: (name: string) => unknown;
  /** A memo field by key (the proposal's subject, src/contracts/subject.ts). */
  memo: (key: string) => unknown;
}

/** The row `list` prints for one run. */
export function listedProposalOf(run: ListedRun): ListedProposal {
  const text = (name: string): string | null => {
    const v = run.attribute(name);
    return typeof v === 'string' ? v : null;
  };
  const closed = run.closeTime !== undefined;
  const status = outcomeStatusOf(stageFrom(text(SA.Stage) ?? undefined), closed);
  const subject = run.memo(SUBJECT_MEMO_KEY);
  return {
    proposal_id: text(SA.ProposalId) ?? '',
    workflow_id: run.workflowId,
    status,
    agent_id: text(SA.AgentId),
    action_type: text(SA.ActionType),
    tier: text(SA.Tier),
    verdict: text(SA.Verdict),
    target: text(SA.Target),
    subject: typeof subject === 'string' ? subject : null,
    waiting_for: status === 'approved' && !closed ? 'token' : null,
    audit_flag: run.attribute(SA.AuditFlag) === true,
    started_at: run.startTime.toISOString(),
    closed_at: run.closeTime?.toISOString() ?? null,
  };
}
