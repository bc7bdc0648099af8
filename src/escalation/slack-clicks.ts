/**
 * A click on a button of an escalation message in Slack: the payload checked, the button matched to the message the app
 * posted, the clicking user to the policy's `slack:<id>` approvers; then the decision (decide.ts), the reason form, or
 * a grant's revocation (slack-grant-revoke.ts). The outcome comes as an edit of the message or a note only they see.
 */
import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import type { ProposalRecord } from '../contracts/status';
import { statusQuery } from '../names';
import { isSlackApprover, slackApproverId } from './approvers';
import type { OutcomeView } from './chat-outcome';
import { parseButtonCustomId, parseRevokeGrantCustomId } from './custom-id';
import { closedNotice, decideFromChat, FORGED, isClosedError, NOT_AN_APPROVER, NOT_OURS } from './decide';
import { describeTarget } from './proposal-summary';
import { onRevokeGrant } from './slack-grant-revoke';
import { messageCarries, type Origin, type SlackInteraction } from './slack-interaction';
import { hasBlock } from './slack-notifier';
import { ClickAction, ClickBody, type ModalNote } from './slack-payloads';
import {
  BLOCK,
  renderSlackOutcome,
  renderSlackReasonModal,
  SLACK_FORMAT,
  slackUpdate,
  type SlackBlock,
} from './slack-render';

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms))),
  ]).finally(() => clearTimeout(timer));
}

function outcomeOf(workflowId: string, s: ProposalRecord): OutcomeView {
  return {
    workflow_id: workflowId,
    status: s.status,
    verdict: s.verdict,
    decisions: s.decisions,
    approvals_needed: s.approvals_needed,
  };
}

async function edit(ctx: SlackInteraction, client: WebClient, body: BlockAction, outcome: OutcomeView): Promise<void> {
  const channel = body.channel?.id;
  const ts = body.message?.ts;
  if (!channel || !ts) return;
  const message = renderSlackOutcome(body.message?.blocks as SlackBlock[] | undefined, outcome);
  await client.chat
    .update(slackUpdate(channel, ts, message))
    .catch((err: unknown) => ctx.log.warn({ err }, 'could not update the escalation message'));
}

/**
 * "Reject with reason": a quick look that the proposal still waits (a modal must open within the trigger's 3
 * seconds, so a slow Temporal opens it anyway: the submission is checked in full), then views.open.
 */
async function openReasonModal(
  ctx: SlackInteraction,
  origin: Origin,
  triggerId: string,
  workflowId: string,
  client: WebClient,
): Promise<void> {
  const status = await withTimeout(
    ctx.temporal.workflow
      .getHandle(workflowId)
      .query(statusQuery)
      .catch((err: unknown): 'gone' | 'timeout' => (isClosedError(err) ? 'gone' : 'timeout')),
    2000,
  );
  if (status === 'gone') return ctx.ephemeral(client, origin, 'This proposal no longer exists. Nothing was done.');
  if (status !== 'timeout' && status.stage !== 'awaiting_human')
    return ctx.ephemeral(client, origin, closedNotice(status, SLACK_FORMAT));
  if (!origin.channelId || !origin.messageTs) return ctx.ephemeral(client, origin, FORGED);
  const subject =
    status === 'timeout'
      ? `Reject ${workflowId}`
      : `Reject ${status.proposal.action_type} → ${describeTarget(status.proposal)} by ${status.proposal.agent_id}`;
  const note: ModalNote = { channel: origin.channelId, ts: origin.messageTs };
  await client.views
    .open({ trigger_id: triggerId, view: renderSlackReasonModal(workflowId, subject, JSON.stringify(note)) })
    .catch((err: unknown) => {
      ctx.log.warn({ err, workflow_id: workflowId }, 'could not open the reason form');
      return ctx.ephemeral(client, origin, 'The reason form could not be opened. Nothing was done; please try again.');
    });
}

/** A button click on one of the app's messages (Bolt acknowledged it already). */
export async function onClick(
  ctx: SlackInteraction,
  body: BlockAction,
  action: ButtonAction,
  client: WebClient,
): Promise<void> {
  const checked = ClickBody.safeParse(body);
  const checkedAction = ClickAction.safeParse(action);
  if (!checked.success || !checkedAction.success) {
    ctx.log.warn(
      { event: 'governance', kind: 'malformed_interaction', issues: (checked.error ?? checkedAction.error)?.issues },
      'governance: a block_actions payload that is not what Slack sends; ignored',
    );
    return;
  }
  const b = checked.data;
  const origin: Origin = {
    userId: b.user.id,
    teamId: b.team?.id ?? null,
    channelId: b.channel?.id ?? null,
    messageTs: b.message?.ts ?? null,
  };
  const actionId = checkedAction.data.action_id;
  const revoke = parseRevokeGrantCustomId(actionId);
  if (revoke) return onRevokeGrant(ctx, body, origin, action, revoke.grantId, client);
  const parsed = parseButtonCustomId(actionId);
  if (!parsed) {
    ctx.governance(origin, 'malformed_interaction', null, actionId, 'action_id is not an agent-judge button');
    return ctx.ephemeral(client, origin, NOT_OURS);
  }
  const { workflowId } = parsed;
  // The data must match a button the app itself put on this message.
  if (!messageCarries(body.message, ctx.self, action, BLOCK.actions(workflowId))) {
    ctx.governance(origin, 'forged_interaction', workflowId, actionId, 'the button does not match its message');
    return ctx.ephemeral(client, origin, FORGED);
  }
  if (!isSlackApprover(ctx.approvers(), b.user.id)) {
    ctx.governance(origin, 'unauthorized_click', workflowId, actionId, 'not a slack:<id> approver in the policy');
    return ctx.ephemeral(client, origin, NOT_AN_APPROVER);
  }
  if (parsed.action === 'reject_reason') return openReasonModal(ctx, origin, b.trigger_id, workflowId, client);
  const result = await decideFromChat({
    client: ctx.temporal,
    workflowId,
    approver: slackApproverId(b.user.id),
    via: 'slack',
    decision: parsed.action,
    signingKey: ctx.signingKey,
    onDecision: ctx.onDecision,
    format: SLACK_FORMAT,
    log: ctx.log,
  });
  if (result.kind === 'refused') {
    if (result.governance) ctx.governance(origin, 'refused_by_workflow', workflowId, actionId, result.governance);
    return ctx.ephemeral(client, origin, result.notice);
  }
  const outcome = outcomeOf(workflowId, result.status);
  if (result.kind === 'closed') {
    await ctx.ephemeral(client, origin, result.notice);
    // Brings a stale message up to date (e.g. when the workflow could not edit it itself).
    const stale = hasBlock(body.message?.blocks as SlackBlock[] | undefined, BLOCK.actions(workflowId));
    if (stale) await edit(ctx, client, body, outcome);
    return;
  }
  await edit(ctx, client, body, outcome);
}
