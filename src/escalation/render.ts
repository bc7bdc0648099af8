/**
 * The escalation messages as Discord sees them: pure functions from an EscalationNotice (or an outcome, a reminder, a
 * grant) to message JSON. Readable on a phone: the action, target, agent and tier first, then both positions of the
 * dispute, then the evidence and constraints. All proposal text is untrusted: it goes through chat-text.ts (escaped,
 * cut to Discord's limits), and every payload sets `allowed_mentions: { parse: [] }` so nothing an agent writes can
 * ping. The embed's pieces are in discord-embed.ts, the outcome's words in chat-outcome.ts.
 */
import type {
  APIActionRowComponent,
  APIButtonComponent,
  APIEmbed,
  APIModalInteractionResponseCallbackData,
} from 'discord.js';
import { inboxProposalUrl } from '../contracts/inbox-link';
import type { DecisionRecord } from '../contracts/status';
import { describeOutcome, type OutcomeView } from './chat-outcome';
import { codeBlock, cutText, safeText, truncate } from './chat-text';
import { MAX_REASON_LENGTH, modalCustomId, REASON_INPUT_ID, revokeGrantCustomId } from './custom-id';
import {
  approvalsText,
  COLORS,
  confidenceText,
  constraintLines,
  discordTimestamp,
  evidenceLines,
  field,
  FIELD,
  fitEmbed,
  footerText,
  LIMITS,
  renderButtons,
  who,
} from './discord-embed';
import type { EscalationNotice, GrantNotice, ReminderNotice, UncertainExecutionNotice } from './notifier';
import { describeTarget, evidenceChecksOf } from './proposal-summary';

export type AllowedMentions = { parse: []; users?: string[] };

/** What the REST API and discord.js accept for a message create or edit. */
export interface MessagePayload {
  content: string;
  embeds: APIEmbed[];
  components: APIActionRowComponent<APIButtonComponent>[];
  allowed_mentions: AllowedMentions;
}

/** The dispute message with its buttons. */
export function renderEscalation(
  notice: EscalationNotice,
  decisions: readonly DecisionRecord[] = [],
  /** The web inbox's public URL: the title and an Inbox field link to the proposal's page there. */
  inboxUrl?: string,
): MessagePayload {
  const inboxLink = inboxUrl ? inboxProposalUrl(inboxUrl, notice.workflow_id) : undefined;
  const p = notice.proposal;
  const action = safeText(p.action_type, 64);
  const agent = safeText(p.agent_id, 128);
  const target = describeTarget(p);
  const needed = Math.max(1, notice.approvals_needed);
  const deadline = discordTimestamp(notice.deadline, 'R');
  const judgePosition = notice.dispute.judge_position || notice.verdict?.reason || '';
  const judgeName = `${FIELD.judge}${confidenceText(notice.dispute.judge_confidence ?? notice.verdict?.confidence)}`;

  const embed: APIEmbed = {
    title: cutText(`${p.action_type} → ${target}`, LIMITS.title, p.proposal_id),
    description: cutText(notice.dispute.reason || 'A person must decide this proposal.', 700, p.proposal_id),
    color: COLORS.pending,
    fields: [
      field(FIELD.agent, agent, true),
      field(FIELD.tier, safeText(notice.tier, 40), true),
      field(FIELD.approvals, approvalsText(needed, decisions), true),
      field(FIELD.deadline, `${deadline} (${discordTimestamp(notice.deadline, 'f')})`),
      field(FIELD.actor, cutText(notice.dispute.actor_position || p.justification, 1000, p.proposal_id)),
      field(
        judgeName,
        judgePosition
          ? cutText(judgePosition, 1000, p.proposal_id)
          : notice.tier === 'human-only'
            ? 'Not judged: this tier is decided by people only.'
            : 'No reasoning given.',
      ),
      field(FIELD.parameters, codeBlock(JSON.stringify(p.parameters ?? {}, null, 1), 'json', 600, p.proposal_id)),
      field(
        `${FIELD.evidence} (${p.cited_evidence.length})`,
        evidenceLines(p.cited_evidence, evidenceChecksOf(notice), p.proposal_id),
      ),
      field(FIELD.constraints, constraintLines(p, notice.verdict)),
      ...(inboxLink ? [field(FIELD.inbox, `[Open it in the inbox](${inboxLink}) to decide with your passkey`)] : []),
    ],
    footer: { text: footerText(notice.workflow_id, p.proposal_id) },
    ...(inboxLink ? { url: inboxLink } : {}),
  };

  const approvalsNote = needed > 1 ? ` · ${needed} approvals needed` : '';
  const content = truncate(
    `**Decision needed:** ${action} by ${agent} (${safeText(notice.tier, 40)})${approvalsNote} · decide ${deadline}`,
    LIMITS.content,
  );
  return {
    content,
    embeds: [fitEmbed(embed, p.proposal_id)],
    components: renderButtons(notice.workflow_id),
    allowed_mentions: { parse: [] },
  };
}

/** The first words of an uncertain-execution message: the notifier finds its own earlier post by them. */
export const UNCERTAIN_HEADLINE = '⚠️ **Execution uncertain:**';

/**
 * An approved action that may or may not have run (its executor died mid-action; it is not run
 * again): what it was, what the executor reported, and what to check. No buttons: nothing to decide.
 */
export function renderUncertainExecution(notice: UncertainExecutionNotice): MessagePayload {
  const p = notice.proposal;
  const embed: APIEmbed = {
    title: safeText(`${p.action_type} → ${describeTarget(p)}`, LIMITS.title),
    description: safeText(notice.explanation, 700),
    color: COLORS.pending,
    fields: [
      field(FIELD.agent, safeText(p.agent_id, 128), true),
      field('Executor', safeText(notice.execution.executor, 64), true),
      field('Started', discordTimestamp(notice.execution.started_at, 'f'), true),
      field('What the executor knows', safeText(notice.execution.error ?? 'nothing', 1000)),
      field(FIELD.parameters, codeBlock(JSON.stringify(p.parameters ?? {}, null, 1), 'json', 600, p.proposal_id)),
    ],
    footer: { text: footerText(notice.workflow_id, p.proposal_id) },
  };
  return {
    content: truncate(
      `${UNCERTAIN_HEADLINE} ${safeText(p.action_type, 64)} by ${safeText(p.agent_id, 128)} may or may not have ` +
        'happened; it will not run again. Check the target.',
      LIMITS.content,
    ),
    embeds: [fitEmbed(embed)],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/**
 * The message after a decision (or a partial approval): the original dispute stays, an Outcome
 * field goes on top, the colour changes; buttons are removed once the proposal is final.
 */
export function renderOutcome(original: APIEmbed | undefined, outcome: OutcomeView): MessagePayload {
  const { headline, details, color, final } = describeOutcome(outcome);
  const base: APIEmbed = original
    ? { ...original }
    : {
        title: 'Escalated proposal',
        footer: { text: footerText(outcome.workflow_id, outcome.verdict?.proposal_id ?? '?') },
      };
  const kept = (base.fields ?? []).filter((f) => f.name !== FIELD.outcome);
  const fields = kept.map((f) => {
    if (f.name === FIELD.deadline && final) return { ...f, value: 'Closed' };
    if (f.name === FIELD.approvals && outcome.approvals_needed) {
      return { ...f, value: truncate(approvalsText(outcome.approvals_needed, outcome.decisions), LIMITS.fieldValue) };
    }
    return f;
  });
  const embed: APIEmbed = {
    ...base,
    color,
    fields: [field(FIELD.outcome, `${headline}\n${details}`), ...fields].slice(0, LIMITS.fields),
  };
  return {
    content: truncate(headline, LIMITS.content),
    embeds: [fitEmbed(embed)],
    components: final ? [] : renderButtons(outcome.workflow_id),
    allowed_mentions: { parse: [] },
  };
}

/** A short reply under the original message; pings only the approvers still expected to act. */
export function renderReminder(
  notice: ReminderNotice,
  mentionUserIds: readonly string[] = [],
): { content: string; allowed_mentions: AllowedMentions } {
  const n = notice.notice;
  const approvals = notice.approvals.filter((d) => d.decision === 'approve').length;
  const needed = Math.max(1, n.approvals_needed);
  const pings = mentionUserIds.map((id) => `<@${id}>`).join(' ');
  const content = truncate(
    `${pings ? `${pings} ` : ''}⏰ **Reminder:** ${safeText(n.proposal.action_type, 64)} ` +
      `by ${safeText(n.proposal.agent_id, 128)} still needs a decision` +
      ` (${approvals} of ${needed} approvals) · deadline ${discordTimestamp(n.deadline, 'R')}`,
    LIMITS.content,
  );
  return { content, allowed_mentions: { parse: [], users: [...mentionUserIds] } };
}

/** The "reject with reason" modal (interaction callback type 9). */
export function renderReasonModal(workflowId: string): APIModalInteractionResponseCallbackData {
  return {
    custom_id: modalCustomId(workflowId),
    title: 'Reject with reason',
    components: [
      {
        type: 1,
        components: [
          {
            type: 4,
            custom_id: REASON_INPUT_ID,
            style: 2,
            label: 'Why reject? (the agent sees this)',
            min_length: 1,
            max_length: MAX_REASON_LENGTH,
            required: true,
          },
        ],
      },
    ],
  };
}

/** The embed with its Grant field set to `value` (after the Outcome field, replacing an earlier one). */
function withGrantField(original: APIEmbed, value: string): APIEmbed {
  const fields = (original.fields ?? []).filter((f) => f.name !== FIELD.grant);
  const at = fields.findIndex((f) => f.name === FIELD.outcome) + 1;
  fields.splice(at, 0, field(FIELD.grant, truncate(value, LIMITS.fieldValue)));
  return fitEmbed({ ...original, fields: fields.slice(0, LIMITS.fields) });
}

/**
 * The decided escalation message with the grant made while deciding it: a Grant field saying what it covers, and
 * a "Revoke grant" button (the message's only component: the proposal's own buttons went with the decision).
 */
export function renderGrant(original: APIEmbed, content: string, grant: GrantNotice): MessagePayload {
  const value =
    `\`${safeText(grant.grant_id, 40)}\` by ${who(grant.approver)}: ${grant.covers} of ` +
    `${safeText(grant.agent_id, 128)} (${safeText(grant.action_type, 64)}), up to ${grant.max_uses} uses until ` +
    `${discordTimestamp(grant.expires_at, 'f')}`;
  return {
    content,
    embeds: [withGrantField(original, value)],
    components: [
      {
        type: 1,
        components: [{ type: 2, style: 4, label: 'Revoke grant', custom_id: revokeGrantCustomId(grant.grant_id) }],
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

/** The message once the grant has ended: its field says so, and the button is gone. */
export function renderGrantEnded(original: APIEmbed, content: string, grantId: string, ended: string): MessagePayload {
  return {
    content,
    embeds: [withGrantField(original, `\`${safeText(grantId, 40)}\`: ${ended}`)],
    components: [],
    allowed_mentions: { parse: [] },
  };
}
