/**
 * The escalation message as Slack sees it: pure functions from an EscalationNotice (or an outcome) to Block Kit.
 * The same content and words as the Discord message (render.ts): the action, target, agent and tier first, then both
 * positions of the dispute, then the evidence and constraints; the outcome's words are render.ts's own.
 *
 * All proposal text is untrusted. Where it stands alone it is a `plain_text` object (Slack renders no formatting,
 * mentions or links in it); where it must sit in `mrkdwn` it is escaped (`&`, `<`, `>`: no mentions, no links, no
 * `<!channel>`) and kept on one line. Messages are posted with `parse: none` and no unfurling.
 */
import type { types } from '@slack/bolt';
import type { Proposal } from '../contracts/proposal';
import { inboxProposalUrl } from '../contracts/inbox-link';
import type { DecisionRecord } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import { slackUserIdOf } from './approvers';
import { buttonCustomId, MAX_REASON_LENGTH, modalCustomId, REASON_INPUT_ID, revokeGrantCustomId } from './custom-id';
import type { EscalationNotice, GrantNotice, ReminderNotice, UncertainExecutionNotice } from './notifier';
import { describeOutcome, type ChatFormat, type OutcomeView } from './chat-outcome';
import { inertText, statusCommand, truncate } from './chat-text';
import { FIELD } from './discord-embed';
import {
  describeTarget,
  EVIDENCE_MARK,
  evidenceChecksOf,
  type EvidenceStatus,
  type EvidenceView,
} from './proposal-summary';

export type SlackBlock = types.KnownBlock;

/** Slack's limits (characters). */
export const SLACK_LIMITS = {
  text: 3000,
  header: 150,
  sectionText: 3000,
  field: 2000,
  buttonText: 75,
  blocks: 50,
  /** `text` beside blocks: the notification and screen-reader text. */
  fallback: 3000,
} as const;

/** A chat.postMessage / chat.update body, less the channel. */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/**
 * The chat.update arguments that replace the message at `channel`/`ts` with `message`: nothing an agent wrote is turned
 * into a mention or a channel ping (the same options every post of ours carries).
 */
export function slackUpdate(channel: string, ts: string, message: SlackMessage) {
  return { channel, ts, text: message.text, blocks: message.blocks, parse: 'none' as const, link_names: false };
}

/**
 * Block ids carry the workflow id: the notifier finds its own earlier post by them (a retried activity never posts
 * twice) and the app checks that a click came from a message that carries its button.
 */
export const BLOCK = {
  escalation: (workflowId: string) => `aj:escalation:${workflowId}`,
  actions: (workflowId: string) => `aj:actions:${workflowId}`,
  reminder: (workflowId: string) => `aj:reminder:${workflowId}`,
  uncertain: (workflowId: string) => `aj:uncertain:${workflowId}`,
  outcome: 'aj:outcome',
  facts: 'aj:facts',
  /** The grant made while deciding: its description, and its "Revoke grant" button. */
  grant: (grantId: string) => `aj:grant:${grantId}`,
  grantActions: (grantId: string) => `aj:grant-actions:${grantId}`,
} as const;

/** Untrusted text for `mrkdwn`: one line, inert (no mentions, links, entities), bounded. */
export function slackEscape(raw: string, max: number): string {
  const text = truncate(inertText(raw), max)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/:\/\//g, ':/\u200b/');
  return truncate(text, max + 40);
}

/** Untrusted text for a `plain_text` object: inert, bounded, never empty (Slack refuses empty text). */
export function plain(raw: string, max: number, keepLines = false): types.PlainTextElement {
  const text = truncate(inertText(raw, { keepLines }).replace(/:\/\//g, ':/\u200b/'), max);
  return { type: 'plain_text', text: text.trim() ? text : '-', emoji: false };
}

function mrkdwn(text: string): types.MrkdwnElement {
  return { type: 'mrkdwn', text: truncate(text || '-', SLACK_LIMITS.sectionText) };
}

/** Slack renders `<!date^…>` in the reader's own time zone; the fallback is the ISO time. */
export function slackDate(iso: string, format = '{date_short_pretty} {time}'): string {
  const ms = Date.parse(iso);
  if (!Number.isFinite(ms)) return slackEscape(iso, 64);
  return `<!date^${Math.floor(ms / 1000)}^${format}|${new Date(ms).toISOString()}>`;
}

/** A person as people know them: a Slack user renders as their name (a mention in an edit or a DM pings nobody). */
export function slackWho(approver: string): string {
  const id = slackUserIdOf(approver);
  return id ? `<@${id}>` : slackEscape(approver, 128);
}

export const SLACK_FORMAT: ChatFormat = {
  channel: 'slack',
  who: slackWho,
  time: (iso) => slackDate(iso),
  text: slackEscape,
};

function labelled(label: string, body: types.PlainTextElement | types.MrkdwnElement): SlackBlock[] {
  return [
    { type: 'context', elements: [mrkdwn(`*${label}*`)] },
    { type: 'section', text: body },
  ];
}

function approvalsText(needed: number, decisions: readonly DecisionRecord[]): string {
  const approvals = decisions.filter((d) => d.decision === 'approve');
  const head = `*${FIELD.approvals}:* ${approvals.length} of ${needed}`;
  if (approvals.length === 0) return head;
  return `${head}: ${approvals.map((d) => `${slackWho(d.approver)} ${slackDate(d.at, '{time}')}`).join(', ')}`;
}

function evidenceText(notice: EscalationNotice, proposalId: string): string {
  const items = notice.proposal.cited_evidence;
  if (items.length === 0) return 'none cited';
  const checks = evidenceChecksOf(notice);
  const lines: string[] = [];
  let known = false;
  for (const [i, ev] of (items as readonly EvidenceView[]).entries()) {
    const status: EvidenceStatus | undefined =
      checks.get(i) ?? (ev.verified === true ? 'verified' : ev.verified === false ? 'failed' : undefined);
    if (status) known = true;
    const mark = status ? EVIDENCE_MARK[status] : '▫️';
    // Each title is one line: a line break in it cannot start a line that passes for one of these.
    const label = inertText(ev.title ?? ev.source ?? ev.type).slice(0, 120);
    const where = ev.url ? ` ${inertText(ev.url).slice(0, 200)}` : '';
    const kind = ev.title || ev.source ? ` (${inertText(ev.type).slice(0, 40)})` : '';
    lines.push(`${mark} ${label}${kind}${where}`);
    if (lines.join('\n').length > 1800) {
      lines.pop();
      lines.push(`… and ${items.length - i} more: ${statusCommand(proposalId)}`);
      break;
    }
  }
  const text = lines.join('\n');
  return known ? text : `${text}\n(not verified by the judge)`;
}

function constraintText(proposal: Proposal, verdict: Verdict | null): string {
  const lines: string[] = [];
  const scope = proposal.scope_claim ?? {};
  if (scope.files_only?.length) {
    const shown = scope.files_only.slice(0, 8).map((f) => inertText(f).slice(0, 80));
    const more = scope.files_only.length > 8 ? ` … +${scope.files_only.length - 8}` : '';
    lines.push(`Files only: ${shown.join(', ')}${more}`);
  }
  if (scope.max_lines !== undefined) lines.push(`At most ${scope.max_lines} lines`);
  if (scope.no_existing_code_deletion) lines.push('No deletion of existing code');
  const c = verdict?.constraints;
  if (c?.scope_limit) lines.push(`Judge: ${inertText(c.scope_limit).slice(0, 300)}`);
  if (c?.require_human_review) lines.push('Judge: requires human review');
  return lines.length ? lines.join('\n') : 'none';
}

/** A long untrusted text: cut, and the cut says how much is missing and where to read it whole. */
function cut(raw: string, max: number, proposalId: string): string {
  if (raw.length <= max) return raw;
  const note = ` … ${raw.length - max} more characters: ${statusCommand(proposalId)}`;
  return `${raw.slice(0, Math.max(0, max - note.length)).replace(/[\ud800-\udbff]$/, '')}${note}`;
}

/** Approve and Reject, each bound to the workflow id in its action_id (the same data as the Discord buttons). */
export function renderSlackButtons(workflowId: string): SlackBlock {
  return {
    type: 'actions',
    block_id: BLOCK.actions(workflowId),
    elements: [
      {
        type: 'button',
        style: 'primary',
        text: { type: 'plain_text', text: 'Approve' },
        action_id: buttonCustomId('approve', workflowId),
        value: workflowId,
      },
      {
        type: 'button',
        style: 'danger',
        text: { type: 'plain_text', text: 'Reject' },
        action_id: buttonCustomId('reject', workflowId),
        value: workflowId,
      },
      {
        type: 'button',
        text: { type: 'plain_text', text: 'Reject with reason…' },
        action_id: buttonCustomId('reject_reason', workflowId),
        value: workflowId,
      },
    ],
  };
}

/** The block and action ids of the reason input in the "Reject with reason" modal. */
export const REASON_BLOCK_ID = REASON_INPUT_ID;

/**
 * The "Reject with reason" modal (views.open). Its callback_id names the workflow; `privateMetadata` (the app's own
 * note of the message the button was on, which Slack hands back unchanged with the submission) says where to answer.
 */
export function renderSlackReasonModal(workflowId: string, subject: string, privateMetadata: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: modalCustomId(workflowId),
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Reject with reason' },
    submit: { type: 'plain_text', text: 'Reject' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      { type: 'section', text: plain(subject, 300) },
      {
        type: 'input',
        block_id: REASON_BLOCK_ID,
        label: { type: 'plain_text', text: 'Why reject? (the agent sees this)' },
        element: {
          type: 'plain_text_input',
          action_id: REASON_INPUT_ID,
          multiline: true,
          min_length: 1,
          max_length: MAX_REASON_LENGTH,
        },
      },
      { type: 'context', elements: [plain(workflowId, 120)] },
    ],
  };
}

function footer(workflowId: string, proposalId: string, kind: 'escalation' | 'uncertain'): SlackBlock {
  return {
    type: 'context',
    block_id: kind === 'escalation' ? BLOCK.escalation(workflowId) : BLOCK.uncertain(workflowId),
    elements: [plain(`${workflowId} · proposal ${proposalId}`, 300)],
  };
}

/** The dispute message with its buttons. */
export function renderSlackEscalation(
  notice: EscalationNotice,
  /** The web inbox's public URL: a line links to the proposal's page there (a link, not a button: no interaction). */
  inboxUrl?: string,
): SlackMessage {
  const p = notice.proposal;
  const id = p.proposal_id;
  const needed = Math.max(1, notice.approvals_needed);
  const judgePosition = notice.dispute.judge_position || notice.verdict?.reason || '';
  const confidence = notice.dispute.judge_confidence ?? notice.verdict?.confidence;
  const confidenceNote = typeof confidence === 'number' ? ` · confidence ${Math.round(confidence * 100)}%` : '';
  const judgeLabel = `${FIELD.judge}${confidenceNote}`;
  const blocks: SlackBlock[] = [
    { type: 'header', text: plain(`${p.action_type} → ${describeTarget(p)}`, SLACK_LIMITS.header) },
    {
      type: 'section',
      text: mrkdwn(
        `*Decision needed*${needed > 1 ? ` · ${needed} approvals needed` : ''} · ` +
          `decide by ${slackDate(notice.deadline)}`,
      ),
    },
    { type: 'section', text: plain(cut(notice.dispute.reason || 'A person must decide this proposal.', 700, id), 800) },
    {
      type: 'section',
      block_id: BLOCK.facts,
      fields: [
        plain(`${FIELD.agent}: ${p.agent_id}`, 200),
        mrkdwn(`*${FIELD.tier}:* ${slackEscape(notice.tier, 40)}`),
        mrkdwn(approvalsText(needed, [])),
        mrkdwn(`*${FIELD.deadline}:* ${slackDate(notice.deadline)}`),
      ],
    },
    ...labelled(FIELD.actor, plain(cut(notice.dispute.actor_position || p.justification, 1500, id), 1700, true)),
    ...labelled(
      judgeLabel,
      plain(
        judgePosition
          ? cut(judgePosition, 1500, id)
          : notice.tier === 'human-only'
            ? 'Not judged: this tier is decided by people only.'
            : 'No reasoning given.',
        1700,
        true,
      ),
    ),
    ...labelled(FIELD.parameters, plain(cut(JSON.stringify(p.parameters ?? {}, null, 1), 1500, id), 1700, true)),
    ...labelled(`${FIELD.evidence} (${p.cited_evidence.length})`, plain(evidenceText(notice, id), 2000, true)),
    ...labelled(FIELD.constraints, plain(constraintText(p, notice.verdict), 1000, true)),
    ...(inboxUrl
      ? [
          {
            type: 'section' as const,
            text: mrkdwn(
              `<${inboxProposalUrl(inboxUrl, notice.workflow_id)}|Open it in the inbox> to decide with your passkey`,
            ),
          },
        ]
      : []),
    renderSlackButtons(notice.workflow_id),
    footer(notice.workflow_id, id, 'escalation'),
  ];
  const text = truncate(
    `Decision needed: ${slackEscape(p.action_type, 64)} by ${slackEscape(p.agent_id, 128)} (${notice.tier})` +
      `${needed > 1 ? ` · ${needed} approvals needed` : ''}`,
    SLACK_LIMITS.fallback,
  );
  return { text, blocks };
}

/** An approved action that may or may not have run: what it was and what to check. No buttons. */
export function renderSlackUncertain(notice: UncertainExecutionNotice): SlackMessage {
  const p = notice.proposal;
  const text =
    `⚠️ Execution uncertain: ${slackEscape(p.action_type, 64)} by ${slackEscape(p.agent_id, 128)} may or may not ` +
    'have happened; it will not run again. Check the target.';
  return {
    text,
    blocks: [
      { type: 'header', text: plain(`${p.action_type} → ${describeTarget(p)}`, SLACK_LIMITS.header) },
      { type: 'section', text: mrkdwn(`*${text}*`) },
      { type: 'section', text: plain(notice.explanation, 700) },
      {
        type: 'section',
        fields: [
          plain(`${FIELD.agent}: ${p.agent_id}`, 200),
          plain(`Executor: ${notice.execution.executor}`, 100),
          mrkdwn(`*Started:* ${slackDate(notice.execution.started_at)}`),
        ],
      },
      ...labelled('What the executor knows', plain(notice.execution.error ?? 'nothing', 1000, true)),
      ...labelled(
        FIELD.parameters,
        plain(cut(JSON.stringify(p.parameters ?? {}, null, 1), 1500, p.proposal_id), 1700, true),
      ),
      footer(notice.workflow_id, p.proposal_id, 'uncertain'),
    ],
  };
}

/**
 * The message after a decision (or a partial approval): the dispute stays, an outcome section goes under the
 * header, the approvals and deadline are brought up to date; the buttons go once the proposal is final. Without the
 * original blocks (they could not be read), a short message with the outcome alone.
 */
export function renderSlackOutcome(original: readonly SlackBlock[] | undefined, outcome: OutcomeView): SlackMessage {
  const { headline, details, final } = describeOutcome(outcome, SLACK_FORMAT);
  const outcomeBlock: SlackBlock = {
    type: 'section',
    block_id: BLOCK.outcome,
    text: mrkdwn(`*${headline}*\n${details}`),
  };
  const base: SlackBlock[] = original?.length
    ? original.filter((b) => b.block_id !== BLOCK.outcome)
    : [
        { type: 'header', text: plain('Escalated proposal', SLACK_LIMITS.header) },
        footer(outcome.workflow_id, outcome.verdict?.proposal_id ?? '?', 'escalation'),
      ];
  const blocks: SlackBlock[] = [];
  for (const b of base) {
    if (b.type === 'actions' && b.block_id === BLOCK.actions(outcome.workflow_id)) {
      if (!final) blocks.push(renderSlackButtons(outcome.workflow_id));
      continue;
    }
    if (b.type === 'section' && b.block_id === BLOCK.facts && b.fields) {
      const fields = b.fields.map((f) => {
        if (f.type !== 'mrkdwn') return f;
        if (f.text.startsWith(`*${FIELD.deadline}:*`) && final) return mrkdwn(`*${FIELD.deadline}:* Closed`);
        if (f.text.startsWith(`*${FIELD.approvals}:*`) && outcome.approvals_needed)
          return mrkdwn(approvalsText(outcome.approvals_needed, outcome.decisions));
        return f;
      });
      blocks.push({ ...b, fields });
      continue;
    }
    blocks.push(b);
    // The outcome goes right under the header.
    if (b.type === 'header' && !blocks.some((x) => x.block_id === BLOCK.outcome)) blocks.push(outcomeBlock);
  }
  if (!blocks.some((x) => x.block_id === BLOCK.outcome)) blocks.unshift(outcomeBlock);
  return { text: truncate(headline, SLACK_LIMITS.fallback), blocks: blocks.slice(0, SLACK_LIMITS.blocks) };
}

/** A reply in the escalation's thread; mentions only the approvers still expected to act. */
export function renderSlackReminder(notice: ReminderNotice, mentionUserIds: readonly string[] = []): SlackMessage {
  const n = notice.notice;
  const approvals = notice.approvals.filter((d) => d.decision === 'approve').length;
  const needed = Math.max(1, n.approvals_needed);
  const pings = mentionUserIds.map((id) => `<@${id}>`).join(' ');
  const text =
    `${pings ? `${pings} ` : ''}⏰ Reminder: ${slackEscape(n.proposal.action_type, 64)} by ` +
    `${slackEscape(n.proposal.agent_id, 128)} still needs a decision (${approvals} of ${needed} approvals)` +
    ` · deadline ${slackDate(n.deadline)}`;
  return {
    text,
    blocks: [{ type: 'section', block_id: BLOCK.reminder(n.workflow_id), text: mrkdwn(text) }],
  };
}

/** Whether a block is one of a grant's (description or button). */
function isGrantBlock(b: SlackBlock): boolean {
  return typeof b.block_id === 'string' && /^aj:grant(-actions)?:/.test(b.block_id);
}

/** The escalation message with the grant made while deciding it: a line saying what it covers, and its button. */
export function renderSlackGrant(original: readonly SlackBlock[], grant: GrantNotice, text: string): SlackMessage {
  const describe =
    `*Grant* \`${slackEscape(grant.grant_id, 40)}\` by ${slackWho(grant.approver)}: ${grant.covers} of ` +
    `${slackEscape(grant.agent_id, 128)} (${slackEscape(grant.action_type, 64)}), up to ${grant.max_uses} uses until ` +
    `${slackDate(grant.expires_at)}`;
  const blocks: SlackBlock[] = [
    { type: 'section', block_id: BLOCK.grant(grant.grant_id), text: mrkdwn(describe) },
    {
      type: 'actions',
      block_id: BLOCK.grantActions(grant.grant_id),
      elements: [
        {
          type: 'button',
          style: 'danger',
          text: { type: 'plain_text', text: 'Revoke grant' },
          action_id: revokeGrantCustomId(grant.grant_id),
          value: grant.grant_id,
        },
      ],
    },
  ];
  return { text, blocks: withGrantBlocks(original, grant.grant_id, blocks) };
}

/** The message once the grant has ended (revoked here or elsewhere, expired, used up): its line says so, no button. */
export function renderSlackGrantEnded(
  original: readonly SlackBlock[],
  grantId: string,
  ended: string,
  text: string,
): SlackMessage {
  const blocks: SlackBlock[] = [
    {
      type: 'section',
      block_id: BLOCK.grant(grantId),
      text: mrkdwn(`*Grant* \`${slackEscape(grantId, 40)}\`: ${ended}`),
    },
  ];
  return { text, blocks: withGrantBlocks(original, grantId, blocks) };
}

/** The original blocks with this grant's blocks in place of any earlier ones, above the footer. */
function withGrantBlocks(original: readonly SlackBlock[], grantId: string, grantBlocks: SlackBlock[]): SlackBlock[] {
  const kept = original.filter(
    (b) => !(isGrantBlock(b) && (b.block_id === BLOCK.grant(grantId) || b.block_id === BLOCK.grantActions(grantId))),
  );
  const footerAt = kept.findIndex(
    (b) => b.type === 'context' && typeof b.block_id === 'string' && b.block_id.startsWith('aj:escalation:'),
  );
  const at = footerAt < 0 ? kept.length : footerAt;
  const blocks = [...kept.slice(0, at), ...grantBlocks, ...kept.slice(at)];
  return blocks.slice(0, SLACK_LIMITS.blocks);
}

/** The grant ids a message carries a "Revoke grant" button for, from its blocks. */
export function grantButtonsOf(blocks: readonly SlackBlock[] | undefined): string[] {
  return (blocks ?? []).flatMap((b) =>
    b.type === 'actions' && typeof b.block_id === 'string' && b.block_id.startsWith('aj:grant-actions:')
      ? [b.block_id.slice('aj:grant-actions:'.length)]
      : [],
  );
}
