/**
 * The "reject with reason" form in Slack, submitted: checked again in full, since the form may have been open for long
 * and its payload is untrusted; a refusal the approver can fix stays in the form.
 */
import type { AllMiddlewareArgs, SlackViewMiddlewareArgs } from '@slack/bolt';
import { isSlackApprover, slackApproverId } from './approvers';
import { cleanReason, parseModalCustomId, REASON_INPUT_ID } from './custom-id';
import { decideFromChat, NOT_AN_APPROVER, NOT_OURS } from './decide';
import type { Origin, SlackInteraction } from './slack-interaction';
import { parseModalNote, ViewSubmissionBody } from './slack-payloads';
import { REASON_BLOCK_ID, SLACK_FORMAT } from './slack-render';

/** What a reason is refused with, inside the modal. */
export const REASON_NEEDED = 'A reason is needed to reject with a reason.';

/**
 * The reason form was submitted. Checked again in full (payload, workflow, approver, reason); a refusal the user
 * can fix shows in the form, anything else closes it and answers with a note only they see in the message's
 * conversation. A recorded reject is final: the workflow edits every copy of the message itself.
 */
export async function onReasonSubmitted(
  ctx: SlackInteraction,
  { ack, body, client }: SlackViewMiddlewareArgs & AllMiddlewareArgs,
): Promise<void> {
  const checked = ViewSubmissionBody.safeParse(body);
  if (!checked.success) {
    ctx.log.warn(
      { event: 'governance', kind: 'malformed_interaction', issues: checked.error.issues },
      'governance: a view_submission payload that is not what Slack sends; ignored',
    );
    return ack();
  }
  const b = checked.data;
  const modal = parseModalCustomId(b.view.callback_id);
  const note = parseModalNote(b.view.private_metadata);
  const origin: Origin = {
    userId: b.user.id,
    teamId: b.team?.id ?? null,
    channelId: note?.channel ?? null,
    messageTs: note?.ts ?? null,
  };
  const refuseInForm = (text: string) =>
    ack({ response_action: 'errors', errors: { [REASON_BLOCK_ID]: text.slice(0, 150) } });
  if (!modal || !note) {
    ctx.governance(origin, 'malformed_interaction', null, b.view.callback_id, 'not an agent-judge reason form');
    return refuseInForm(NOT_OURS);
  }
  const { workflowId } = modal;
  if (!isSlackApprover(ctx.approvers(), b.user.id)) {
    ctx.governance(
      origin,
      'unauthorized_click',
      workflowId,
      b.view.callback_id,
      'not a slack:<id> approver in the policy',
    );
    return refuseInForm(NOT_AN_APPROVER);
  }
  const reason = cleanReason(b.view.state.values[REASON_BLOCK_ID]?.[REASON_INPUT_ID]?.value);
  if (!reason) return refuseInForm(REASON_NEEDED);
  // Closes the form within Slack's 3 seconds; the outcome comes as an edit or a note.
  await ack();
  const result = await decideFromChat({
    client: ctx.temporal,
    workflowId,
    approver: slackApproverId(b.user.id),
    via: 'slack',
    decision: 'reject',
    reason,
    signingKey: ctx.signingKey,
    onDecision: ctx.onDecision,
    format: SLACK_FORMAT,
    log: ctx.log,
  });
  if (result.kind === 'refused') {
    if (result.governance)
      ctx.governance(origin, 'refused_by_workflow', workflowId, b.view.callback_id, result.governance);
    return ctx.ephemeral(client, origin, result.notice);
  }
  if (result.kind === 'closed') return ctx.ephemeral(client, origin, result.notice);
}
