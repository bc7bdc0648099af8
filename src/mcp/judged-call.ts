/**
 * The MCP proxy's view of the gate's call resolution (src/gate/resolve.ts): the same walk, leased to `mcp-proxy`,
 * with every answer but `forward` rendered as the MCP tool result the agent reads (src/mcp/answers.ts).
 */
import type { Client } from '@temporalio/client';
import type { ProposalRecord } from '../contracts/status';
import type { CallerOutcome } from '../contracts/caller-outcome';
import type { Proposal } from '../contracts/proposal';
import { reportCallerOutcome } from '../client/performer';
import { reportNotPerformed, resolveCall, unreachableReason, type ResolveOptions } from '../gate/resolve';
import type { AgentJudgeArgument } from './tools';
import { type CallAnswer, renderGateAnswer } from './answers';
import { MCP_REDEEMER } from './mapping';

export { MAX_CALL_SEQUENCE } from '../gate/resolve';

export type Resolution =
  | { kind: 'forward'; status: ProposalRecord }
  | { kind: 'answer'; answer: CallAnswer }
  | { kind: 'cancelled' };

export type JudgeCallOptions = Omit<ResolveOptions, 'redeemer'>;

/** Resolves one judged call for the MCP proxy (see `resolveCall`). */
export async function resolveJudgedCall(
  options: JudgeCallOptions,
  proposalAt: (sequence: number) => Proposal,
  agentJudge: AgentJudgeArgument,
): Promise<Resolution> {
  const r = await resolveCall({ ...options, redeemer: MCP_REDEEMER }, proposalAt, agentJudge);
  return r.kind === 'answer' ? { kind: 'answer', answer: renderGateAnswer(r.answer) } : r;
}

/** Why a judged call could not be decided, as the agent reads it (see `unreachableReason`). */
export function judgeFailure(err: unknown, client: Client): string {
  return unreachableReason(err, client);
}

/** Records what the upstream did with a forwarded call (or that it was never forwarded) on its proposal. */
export async function report(client: Client, workflowId: string, outcome: CallerOutcome): Promise<void> {
  await reportCallerOutcome(client, workflowId, outcome);
}

/** A leased call that was never sent upstream: recorded as `upstream_failure`, why, and that it was not forwarded. */
export async function reportNotForwarded(client: Client, workflowId: string, why: string): Promise<void> {
  await reportNotPerformed(client, workflowId, why);
}
