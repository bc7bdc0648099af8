/**
 * "Revoke grant" on a Slack message: the button of a grant made while deciding the message's proposal. Checked like a
 * decision's button, then sent as the grant workflow's `revokeGrant` Update; the message then says how the grant ended.
 */
import type { BlockAction, ButtonAction } from '@slack/bolt';
import type { WebClient } from '@slack/web-api';
import { grantWorkflowId } from '../names';
import { isSlackApprover, slackApproverId } from './approvers';
import { FORGED, NOT_AN_APPROVER } from './decide';
import { revokeFromChat } from './grant-revoke';
import { messageCarries, type Origin, type SlackInteraction } from './slack-interaction';
import { BLOCK, renderSlackGrantEnded, SLACK_FORMAT, slackUpdate, type SlackBlock } from './slack-render';

/**
 * "Revoke grant" on the message of the proposal the grant was made for: the same checks as a decision (the app's
 * own button on this message, a listed approver), then the revocation (src/escalation/grant-revoke.ts), which a grant
 * no longer live refuses.
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
  const result = await revokeFromChat(ctx.temporal, grantId, by, 'Slack', SLACK_FORMAT, ctx.log);
  if ('failed' in result) return ctx.ephemeral(client, origin, result.failed);
  const { ended, notice } = result;
  if (notice !== undefined) await ctx.ephemeral(client, origin, notice);
  const channel = origin.channelId;
  const ts = origin.messageTs;
  if (!channel || !ts) return;
  const blocks = (body.message?.blocks ?? []) as SlackBlock[];
  const message = renderSlackGrantEnded(blocks, grantId, ended, body.message?.text ?? `Grant ${grantId}`);
  await client.chat
    .update(slackUpdate(channel, ts, message))
    .catch((e: unknown) => ctx.log.warn({ err: e }, 'could not update the message after revoking the grant'));
}
