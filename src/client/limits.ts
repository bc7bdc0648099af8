/**
 * The per-agent limits of `spec.limits` (issue 21), checked where a proposal is submitted: one agent's flood is refused
 * before it starts anything, so it never takes another agent's share of the workers or of the approvers' attention.
 * Counted with Temporal visibility (`count` by the `AgentId` search attribute), so the count holds across every process
 * that submits; visibility lags the starts by a few hundred milliseconds, so a burst faster than that can pass a limit
 * by about as many proposals as it sends in that time (docs/security.md, Per-agent limits).
 */
import type { Client } from '@temporalio/client';
import { durationMs } from '../contracts/duration';
import { LimitExceededError, type LimitName } from '../contracts/errors';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import { PROPOSAL_WORKFLOW_TYPE, SA } from '../names';
import { tierFor } from '../policy/classify';

/** What a submission is checked against, and who hears of a refusal (a metrics counter). */
export interface SubmissionLimits {
  /** The policy whose `spec.limits` apply (the one the submitting process loaded). */
  policy: CompliancePolicy;
  /** Called once per refusal, with the limit that refused (the `agent_judge_limit_refusals_total` counter). */
  onRefused?: (limit: LimitName) => void;
}

/** Start times of at most this many proposals are read to say when a window limit resets. */
const MAX_LISTED = 1000;

/**
 * Refuses `proposal` with a {@link LimitExceededError} when its agent is at one of its limits: proposals in the window
 * (every tier), and pending escalations (only for a proposal that goes to a person at once, the human-only tier; a
 * judged proposal that escalates later is not refused).
 */
export async function checkSubmissionLimits(
  client: Client,
  proposal: Proposal,
  where: { taskQueue: string; workflowId: string },
  limits: SubmissionLimits,
): Promise<void> {
  const { taskQueue } = where;
  const { policy } = limits;
  const { proposals, pendingEscalationsPerAgent } = policy.spec.limits;
  const windowMs = durationMs(proposals.window);
  const now = Date.now();
  // Agent ids and task queue names have no quotes (AgentIdSchema): safe inside the query's literals.
  const mine =
    `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}' ` +
    `AND ${SA.AgentId.name} = '${proposal.agent_id}'`;
  const inWindow = `${mine} AND StartTime > '${new Date(now - windowMs).toISOString()}'`;
  const waiting = `${mine} AND ExecutionStatus = 'Running' AND ${SA.Stage.name} = 'awaiting_human'`;
  const escalates = tierFor(policy, proposal.action_type) === 'human-only';
  const [recent, pending] = await Promise.all([
    client.workflow.count(inWindow),
    escalates ? client.workflow.count(waiting) : Promise.resolve(null),
  ]);
  const over = recent.count >= proposals.perAgent || (pending !== null && pending.count >= pendingEscalationsPerAgent);
  // The same content again (a retry, an MCP client asking after its held call) starts nothing new: it goes on to meet
  // its own run, as without limits.
  if (!over || (await exists(client, where.workflowId))) return;
  const refuse = (limit: LimitName, resetsAt: string | null, message: string): never => {
    limits.onRefused?.(limit);
    throw new LimitExceededError(limit, resetsAt, message);
  };
  if (recent.count >= proposals.perAgent) {
    // The limit lifts when enough of the window's proposals have left it: the (count - perAgent + 1)th oldest.
    const starts = await startTimes(client, inWindow);
    const leaving = starts[Math.min(recent.count - proposals.perAgent, starts.length - 1)];
    const resetsAt = new Date((leaving ?? now) + windowMs).toISOString();
    refuse(
      'proposals_per_agent',
      resetsAt,
      `limit proposals_per_agent: ${proposal.agent_id} submitted ${recent.count} proposals in the last ` +
        `${proposals.window} (spec.limits.proposals.perAgent is ${proposals.perAgent}); resets at ${resetsAt}`,
    );
  }
  if (pending !== null && pending.count >= pendingEscalationsPerAgent) {
    // A slot frees when one waiting proposal is decided, at the latest when the oldest one's escalation times out.
    const [oldest] = await startTimes(client, waiting);
    const resetsAt =
      oldest === undefined ? null : new Date(oldest + durationMs(policy.spec.escalation.timeout)).toISOString();
    refuse(
      'pending_escalations_per_agent',
      resetsAt,
      `limit pending_escalations_per_agent: ${proposal.agent_id} has ${pending.count} proposals waiting for a person ` +
        `(spec.limits.pendingEscalationsPerAgent is ${pendingEscalationsPerAgent}); a slot frees when one is ` +
        `decided${resetsAt ? `, at the latest at ${resetsAt}` : ''}`,
    );
  }
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  return client.workflow
    .getHandle(workflowId)
    .describe()
    .then(
      () => true,
      () => false,
    );
}

/** Start times (ms) of the proposals a query finds, oldest first. */
async function startTimes(client: Client, query: string): Promise<number[]> {
  const out: number[] = [];
  for await (const wf of client.workflow.list({ query, pageSize: MAX_LISTED })) {
    out.push(wf.startTime.getTime());
    if (out.length >= MAX_LISTED) break;
  }
  return out.sort((a, b) => a - b);
}
