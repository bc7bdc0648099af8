/**
 * The audit trail is the workflow history (seed 000 §4 "audit trail", §6 audit cadence). These
 * functions read it back: replay every closed proposal against the current workflow code, and
 * export one JSON line per proposal with every verdict and decision.
 */
import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { Worker, type WorkflowBundleOption } from '@temporalio/worker';
import type { HumanDecision } from '../contracts/messages';
import { outcomeStatusOf, stageFrom } from '../contracts/lifecycle';
import type { ProposalOutcome } from '../contracts/status';
import { humanDecisionUpdate, PROPOSAL_WORKFLOW_TYPE, SA } from '../names';
import { defaultWorkflowCode } from '../worker';

export interface ReplaySummary {
  replayed: number;
  ok: number;
  nondeterministic: number;
  failed: number;
  problems: Array<{ workflow_id: string; error: string }>;
}

function sinceClause(sinceMs?: number): string {
  return sinceMs === undefined ? '' : ` AND StartTime > '${new Date(Date.now() - sinceMs).toISOString()}'`;
}

/**
 * Replays every closed proposal history since `sinceMs` against the current workflow code. Any
 * nondeterminism means a deployed change would break running proposals.
 */
export async function replayProposals(
  client: Client,
  {
    sinceMs,
    workflowBundle,
    onProgress,
  }: { sinceMs?: number; workflowBundle?: WorkflowBundleOption; onProgress?: (n: number) => void } = {},
): Promise<ReplaySummary> {
  const query = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ExecutionStatus != 'Running'${sinceClause(sinceMs)}`;
  const histories = client.workflow.list({ query }).intoHistories();
  const summary: ReplaySummary = { replayed: 0, ok: 0, nondeterministic: 0, failed: 0, problems: [] };
  const options = workflowBundle ? { workflowBundle } : defaultWorkflowCode();
  for await (const result of Worker.runReplayHistories({ ...options, replayName: 'agent-judge-audit' }, histories)) {
    summary.replayed += 1;
    onProgress?.(summary.replayed);
    if (!result.error) summary.ok += 1;
    else {
      if (result.error.name === 'DeterminismViolationError') summary.nondeterministic += 1;
      else summary.failed += 1;
      summary.problems.push({ workflow_id: result.workflowId, error: `${result.error.name}: ${result.error.message}` });
    }
  }
  return summary;
}

export interface AuditRecord extends ProposalOutcome {
  agent_id: string | null;
  action_type: string | null;
  tier: string | null;
  target: string | null;
  audit_flag: boolean;
  started_at: string;
  closed_at: string | null;
  decisions: Array<HumanDecision & { accepted: boolean }>;
}

/**
 * One record per proposal since `sinceMs`, read from history alone (no worker needed): the final
 * outcome and every human decision that was accepted.
 */
export async function* exportAudit(
  client: Client,
  { sinceMs }: { sinceMs?: number } = {},
): AsyncGenerator<AuditRecord> {
  const query = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}'${sinceClause(sinceMs)}`;
  for await (const wf of client.workflow.list({ query })) {
    const handle = client.workflow.getHandle(wf.workflowId, wf.runId);
    const history = await handle.fetchHistory();
    let outcome: ProposalOutcome | null = null;
    const decisions: AuditRecord['decisions'] = [];
    for (const event of history.events ?? []) {
      const accepted = event.workflowExecutionUpdateAcceptedEventAttributes;
      if (accepted?.acceptedRequest?.input?.name === humanDecisionUpdate.name) {
        const payload = accepted.acceptedRequest.input.args?.payloads?.[0];
        if (payload) decisions.push({ ...defaultPayloadConverter.fromPayload<HumanDecision>(payload), accepted: true });
      }
      const done = event.workflowExecutionCompletedEventAttributes;
      const payload = done?.result?.payloads?.[0];
      if (payload) outcome = defaultPayloadConverter.fromPayload<ProposalOutcome>(payload);
    }
    const sa = wf.typedSearchAttributes;
    yield {
      proposal_id: outcome?.proposal_id ?? sa.get(SA.ProposalId) ?? '',
      workflow_id: wf.workflowId,
      // The run's own result when it completed; otherwise the one rule `list` uses too.
      status: outcome?.status ?? outcomeStatusOf(stageFrom(sa.get(SA.Stage)), wf.closeTime !== undefined),
      verdict: outcome?.verdict ?? null,
      verdicts: outcome?.verdicts ?? [],
      execution: outcome?.execution ?? null,
      agent_id: sa.get(SA.AgentId) ?? null,
      action_type: sa.get(SA.ActionType) ?? null,
      tier: sa.get(SA.Tier) ?? null,
      target: sa.get(SA.Target) ?? null,
      audit_flag: sa.get(SA.AuditFlag) ?? false,
      started_at: wf.startTime.toISOString(),
      closed_at: wf.closeTime?.toISOString() ?? null,
      decisions,
    };
  }
}
