/**
 * Revoking a grant, written once: {@link sendRevocation} sends the grant workflow's `revokeGrant` Update for everyone
 * (the CLI and the inbox through src/client's `revokeGrant`, which wraps its answer in errors), and
 * {@link revokeFromChat} is what Discord's and Slack's "Revoke grant" button makes of it: what the message then shows
 * of the grant and what the person who clicked is told. Here, not in src/client, because the chat apps sit below the
 * client (eslint.config.js). Revocation only takes power away: like `agent-judge grants revoke`, it is not signed;
 * `by` names the approver for the audit trail.
 */
import { WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { GrantRevocation, GrantStatus } from '../contracts/grant';
import type { Logger } from '../contracts/logger';
import { grantWorkflowId, revokeGrantUpdate } from '../names';
import { grantEndedText, type ChatFormat } from './chat-outcome';
import { isClosedError } from './decide';

/** A revocation sent to a grant's workflow: its status after it, or why the grant was not revoked. */
export type RevocationResult =
  | { revoked: GrantStatus }
  /** The grant's workflow refused it: the grant is no longer live (expired, used up, revoked). */
  | { refused: WorkflowUpdateFailedError }
  /** No answer: the workflow has closed or is not there, or Temporal could not be reached. */
  | { unanswered: unknown };

export async function sendRevocation(
  client: Client,
  grantId: string,
  revocation: GrantRevocation,
): Promise<RevocationResult> {
  try {
    return {
      revoked: await client.workflow
        .getHandle(grantWorkflowId(grantId))
        .executeUpdate(revokeGrantUpdate, { args: [revocation] }),
    };
  } catch (err) {
    return err instanceof WorkflowUpdateFailedError ? { refused: err } : { unanswered: err };
  }
}

/** What a click on "Revoke grant" came to. */
export type ChatRevocation =
  /** How the grant ended, for the message; `notice` for the clicker when it was no longer live (nothing was done). */
  | { ended: string; notice?: string }
  /** agent-judge could not be asked: tell the clicker, leave the message as it is. */
  | { failed: string };

export async function revokeFromChat(
  client: Client,
  grantId: string,
  by: string,
  app: 'Discord' | 'Slack',
  format: ChatFormat,
  log: Logger,
): Promise<ChatRevocation> {
  const result = await sendRevocation(client, grantId, { by, reason: `revoked from ${app}` });
  if ('revoked' in result) {
    const status = result.revoked;
    const at = status.revoked?.at ?? new Date().toISOString();
    const via = app.toLowerCase();
    log.info({ event: 'grant.revoked', grant_id: grantId, by, via }, `grant ${grantId} revoked by ${by}`);
    return {
      ended: grantEndedText({ state: 'revoked', uses: status.uses.length, by, at }, status.definition.max_uses, format),
    };
  }
  if ('unanswered' in result && !isClosedError(result.unanswered)) {
    log.error({ err: result.unanswered, grant_id: grantId }, 'revokeGrant update failed');
    return { failed: 'agent-judge could not revoke the grant. Nothing was done; please try again.' };
  }
  // Revoked elsewhere, expired or used up: say so, and bring the message up to date.
  const why = 'refused' in result ? (result.refused.cause?.message ?? result.refused.message) : 'it has ended';
  return { ended: 'no longer live', notice: `This grant is no longer live (${why.slice(0, 200)}). Nothing was done.` };
}
