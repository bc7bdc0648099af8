/**
 * One click of a verified approver in a chat channel (Discord, Slack), turned into the `humanDecision` Update: the
 * same checks, quorum answers and refusals whatever channel the click came from. The channel has already checked
 * that the clicking user is a listed approver; this is the part that talks to Temporal. The workflow's validator
 * checks everything again: it is the authority.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { Logger } from '../contracts/logger';
import type { KeyFile } from '../contracts/identity';
import type { HumanDecision } from '../contracts/messages';
import { proposalContentDigest } from '../contracts/digest';
import type { ProposalRecord } from '../contracts/status';
import { signDecision } from '../identity/sign-decision';
import { humanDecisionUpdate, statusQuery } from '../names';
import { describeOutcome, DISCORD_FORMAT, type ChatFormat } from './chat-outcome';

/** What the clicking user is told when the channel refuses them before Temporal is asked. */
export const NOT_AN_APPROVER = 'You are not an approver for this proposal. Nothing was done; the attempt was recorded.';
export const NOT_OURS = 'This button is not one agent-judge recognises. Nothing was done.';
export const FORGED = 'This button does not belong to this message. Nothing was done; the attempt was recorded.';

export type ChatDecisionResult =
  /** The Update was accepted: `status` is the proposal after it (decided, or waiting for more approvals). */
  | { kind: 'recorded'; status: ProposalRecord }
  /** The proposal is no longer waiting: tell the user, and bring the message up to date from `status`. */
  | { kind: 'closed'; notice: string; status: ProposalRecord }
  /** Nothing was decided; `governance` is set when the refusal is a governance event (the workflow refused). */
  | { kind: 'refused'; notice: string; governance?: string };

export interface ChatDecisionInput {
  client: Client;
  workflowId: string;
  /** `discord:<id>` or `slack:<id>`, already checked against the channel's policy. */
  approver: string;
  via: 'discord' | 'slack';
  decision: HumanDecision['decision'];
  reason?: string;
  /** The channel's own key: it signs the decisions of the approvers it verified. */
  signingKey?: KeyFile;
  /** Called right before the Update is sent. */
  onDecision?: (workflowId: string) => void;
  /** How outcome words are written in this channel (for the "no longer waiting" notice). */
  format?: ChatFormat;
  log: Logger;
}

export function isClosedError(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  const msg = err instanceof Error ? err.message : '';
  return /already completed|workflow execution.*(completed|closed|not found)/i.test(msg);
}

/** "This proposal is no longer waiting for a decision. ✅ Approved by …." */
export function closedNotice(record: ProposalRecord, format: ChatFormat = DISCORD_FORMAT): string {
  const { headline } = describeOutcome(
    {
      workflow_id: record.workflow_id,
      status: record.status,
      verdict: record.verdict,
      decisions: record.decisions,
    },
    format,
  );
  return `This proposal is no longer waiting for a decision. ${headline}.`;
}

/** Sends one approver's decision, unless the proposal is closed or the approver has already decided. Never throws. */
export async function decideFromChat(input: ChatDecisionInput): Promise<ChatDecisionResult> {
  const { workflowId, approver, decision, reason, signingKey, log } = input;
  const handle = input.client.workflow.getHandle(workflowId);
  let status: ProposalRecord;
  let firstRunId = '';
  try {
    // With a key, the signature binds the run clicked on: its chain's first run id, from describe.
    const [s, described] = await Promise.all([handle.query(statusQuery), signingKey ? handle.describe() : undefined]);
    status = s;
    firstRunId = described ? described.raw.workflowExecutionInfo?.firstRunId || described.runId : '';
  } catch (err) {
    if (isClosedError(err)) return { kind: 'refused', notice: 'This proposal no longer exists. Nothing was done.' };
    log.error({ err, workflow_id: workflowId }, 'status query failed');
    return { kind: 'refused', notice: 'agent-judge could not be reached. Nothing was decided; please try again.' };
  }
  if (status.stage !== 'awaiting_human') return { kind: 'closed', notice: closedNotice(status, input.format), status };
  if (status.decisions.some((d) => d.approver === approver)) {
    const left = Math.max(0, status.approvals_needed - status.decisions.filter((d) => d.decision === 'approve').length);
    return {
      kind: 'refused',
      notice: `You have already decided this proposal; waiting for ${left} more approval(s).`,
    };
  }

  input.onDecision?.(workflowId);
  const unsigned: HumanDecision = { decision, approver, via: input.via, ...(reason ? { reason } : {}) };
  const binding = { workflowId, runId: firstRunId, contentSha256: proposalContentDigest(status.proposal) };
  const body = signingKey ? signDecision(binding, unsigned, signingKey) : unsigned;
  let after: ProposalRecord;
  try {
    // The workflow's validator checks again (approver, still waiting, no repeat): it is the authority.
    after = await handle.executeUpdate(humanDecisionUpdate, { args: [body] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) {
      const why = err.cause?.message ?? err.message;
      return {
        kind: 'refused',
        notice: `Not accepted: ${why.slice(0, 300)}`,
        ...(/not an approver/i.test(why) ? { governance: why } : {}),
      };
    }
    if (isClosedError(err)) return { kind: 'refused', notice: 'This proposal has already closed. Nothing was done.' };
    log.error({ err, workflow_id: workflowId }, 'humanDecision update failed');
    return {
      kind: 'refused',
      notice: 'agent-judge could not record your decision. Nothing was decided; please try again.',
    };
  }
  log.info(
    { event: 'decision', workflow_id: workflowId, approver, decision, status: after.status, via: input.via },
    `decision recorded: ${decision} by ${approver}`,
  );
  return { kind: 'recorded', status: after };
}
