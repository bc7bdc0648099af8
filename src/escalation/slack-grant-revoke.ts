/**
 * "Revoke grant" on a Slack message: the button of a grant made while deciding the message's proposal. Checked like a
 * decision's button, then sent as the grant workflow's `revokeGrant` Update; the message then says how the grant ended.
 */
import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { grantWorkflowId, revokeGrantUpdate } from '../names';
import { isSlackApprover, slackApproverId } from './approvers';
import { grantEndedText } from './chat-outcome';
import { FORGED, isClosedError, NOT_AN_APPROVER } from './decide';
import { messageCarries, type Origin, type SlackInteraction } from './slack-interaction';
import { BLOCK, renderSlackGrantEnded, SLACK_FORMAT, slackUpdate, type SlackBlock } from './slack-render';

/**
 * "Revoke grant" on the message of the proposal the grant was made for: the same checks as a decision (the app's
 * own button on this message, a listed approver), then the grant workflow's `revokeGrant` Update, which refuses a
 * grant that is no longer live. Revocation only takes power away: like `agent-judge grants revoke`, it is not signed;
 * `by` names the approver for the audit trail.
 */
export async function onRevokeGrant(
  ctx: SlackInteraction,
  body: BlockAction,
  origin: Origin,
  action: ButtonAction,
  grantId: string,
  client: WebClient,
): Promise<void> {
  const grantWorkflow = grantWorkflowId(grantId);
  if (!messageCarries(body.message, ctx.self, action, BLOCK.grantActions(grantId))) {
    ctx.governance(
      origin,
      'forged_interaction',
      grantWorkflow,
      action.action_id,
      'the button does not match its message',
    );
    return ctx.ephemeral(client, origin, FORGED);
  }
  if (!isSlackApprover(ctx.approvers(), origin.userId)) {
    ctx.governance(
      origin,
      'unauthorized_click',
      grantWorkflow,
      action.action_id,
      'not a slack:<id> approver in the policy',
    );
    return ctx.ephemeral(client, origin, NOT_AN_APPROVER);
  }
  const by = slackApproverId(origin.userId);
  let ended: string;
  try {
    const status = await ctx.temporal.workflow
      .getHandle(grantWorkflow)
      .executeUpdate(revokeGrantUpdate, { args: [{ by, reason: 'revoked from Slack' }] });
    ended = grantEndedText(
      { state: 'revoked', uses: status.uses.length, by, at: status.revoked?.at ?? new Date().toISOString() },
      status.definition.max_uses,
      SLACK_FORMAT,
    );
    ctx.log.info({ event: 'grant.revoked', grant_id: grantId, by, via: 'slack' }, `grant ${grantId} revoked by ${by}`);
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError || isClosedError(err)) {
      // Revoked elsewhere, expired or used up: say so, and bring the message up to date.
      const why = err instanceof WorkflowUpdateFailedError ? (err.cause?.message ?? err.message) : 'it has ended';
      await ctx.ephemeral(client, origin, `This grant is no longer live (${why.slice(0, 200)}). Nothing was done.`);
      ended = 'no longer live';
    } else {
      ctx.log.error({ err, grant_id: grantId }, 'revokeGrant update failed');
      return ctx.ephemeral(
        client,
        origin,
        'agent-judge could not revoke the grant. Nothing was done; please try again.',
      );
    }
  }
  const channel = origin.channelId;
  const ts = origin.messageTs;
  if (!channel || !ts) return;
  const blocks = (body.message?.blocks ?? []) as SlackBlock[];
  const message = renderSlackGrantEnded(blocks, grantId, ended, body.message?.text ?? `Grant ${grantId}`);
  await client.chat
    .update(slackUpdate(channel, ts, message))
    .catch((e: unknown) => ctx.log.warn({ err: e }, 'could not update the message after revoking the grant'));
}
