/**
 * The pieces of Discord's escalation message: its limits, colours and field names, the embed's fields (approvals,
 * evidence, constraints, footer) and buttons, and fitting an embed into Discord's 6,000 characters. The messages
 * themselves (render.ts) are put together from these.
 */
import type { APIActionRowComponent, APIButtonComponent, APIEmbed, APIEmbedField } from 'discord.js';
import type { EvidenceStatus } from '../contracts/lifecycle';
import type { Proposal } from '../contracts/proposal';
import type { DecisionRecord } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import { discordUserIdOf } from './approvers';
import { CONTROL, escapeText, inlineCode, safeText, statusCommand, truncate } from './chat-text';
import { buttonCustomId } from './custom-id';
import { EVIDENCE_MARK, type EvidenceView } from './proposal-summary';

/** Discord's message and embed limits (characters). */
export const LIMITS = {
  content: 2000,
  title: 256,
  description: 4096,
  fieldName: 256,
  fieldValue: 1024,
  fields: 25,
  footer: 2048,
  embedTotal: 6000,
  buttonLabel: 80,
  modalTitle: 45,
  textInputLabel: 45,
} as const;

/** Colours: pending amber, approved green, rejected red, expired grey. */
export const COLORS = { pending: 0xf0b232, approved: 0x23a55a, rejected: 0xda373c, expired: 0x80848e } as const;

/** Field names; the outcome renderers find fields by these. */
export const FIELD = {
  outcome: 'Outcome',
  agent: 'Agent',
  tier: 'Tier',
  approvals: 'Approvals',
  deadline: 'Deadline',
  actor: "Actor's justification",
  judge: "Judge's reasoning",
  parameters: 'Parameters',
  evidence: 'Evidence',
  constraints: 'Requested constraints',
  inbox: 'Inbox',
  grant: 'Grant',
} as const;

function embedSize(e: APIEmbed): number {
  return (
    (e.title?.length ?? 0) +
    (e.description?.length ?? 0) +
    (e.footer?.text.length ?? 0) +
    (e.author?.name.length ?? 0) +
    (e.fields ?? []).reduce((n, f) => n + f.name.length + f.value.length, 0)
  );
}

/**
 * Shrinks the longest field values until the embed fits Discord's 6,000-character total; with a proposal id, each
 * shrunk field says it was cut and where to read it whole.
 */
export function fitEmbed(embed: APIEmbed, proposalId?: string): APIEmbed {
  const e: APIEmbed = { ...embed, fields: (embed.fields ?? []).slice(0, LIMITS.fields).map((f) => ({ ...f })) };
  let over = embedSize(e) - LIMITS.embedTotal;
  while (over > 0) {
    const longest = [...(e.fields ?? [])].sort((a, b) => b.value.length - a.value.length)[0];
    if (!longest || longest.value.length <= 64) {
      e.description = truncate(e.description ?? '', Math.max(1, (e.description?.length ?? 0) - over));
      break;
    }
    const note = proposalId ? `\n… cut to fit: \`${statusCommand(proposalId)}\`` : '';
    const value = longest.value.endsWith(note) && note ? longest.value.slice(0, -note.length) : longest.value;
    longest.value = `${truncateMarkdown(value, Math.max(64, longest.value.length - over - note.length))}${note}`;
    over = embedSize(e) - LIMITS.embedTotal;
  }
  return e;
}

/** Truncates already-rendered text, closing a code block it cut open. */
function truncateMarkdown(text: string, max: number): string {
  if (text.length <= max) return text;
  const opened = text.startsWith('```');
  if (!opened) return truncate(text, max);
  return `${truncate(text, max - 4)}\n\`\`\``;
}

function unixSeconds(iso: string): number | null {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : null;
}

/** Discord renders `<t:unix:R>` in the reader's own time zone and language. */
export function discordTimestamp(iso: string, style: 'R' | 'f' | 't' = 'R'): string {
  const s = unixSeconds(iso);
  return s === null ? escapeText(iso) : `<t:${s}:${style}>`;
}

/** An approver as people know them: a Discord user renders as their name (and never pings). */
export function who(approver: string): string {
  const id = discordUserIdOf(approver);
  return id ? `<@${id}>` : safeText(approver, 128);
}

/** The judge's confidence, as a field name's tail. */
export function confidenceText(c: number | null | undefined): string {
  return c === null || c === undefined ? '' : ` · confidence ${Math.round(c * 100)}%`;
}

export function evidenceLines(
  items: readonly EvidenceView[],
  checks: ReadonlyMap<number, EvidenceStatus> = new Map(),
  proposalId?: string,
): string {
  if (items.length === 0) return 'none cited';
  const lines: string[] = [];
  let known = false;
  for (const [i, ev] of items.entries()) {
    const status: EvidenceStatus | undefined =
      checks.get(i) ?? (ev.verified === true ? 'verified' : ev.verified === false ? 'failed' : undefined);
    if (status) known = true;
    const mark = status ? EVIDENCE_MARK[status] : '▫️';
    const label = safeText(ev.title ?? ev.source ?? ev.type, 120);
    const where = ev.url
      ? ` ${inlineCode(ev.url, 200)}`
      : ev.source && ev.title
        ? ` ${inlineCode(ev.source, 120)}`
        : '';
    const kind = ev.title || ev.source ? ` (${safeText(ev.type, 40)})` : '';
    lines.push(`${mark} ${label}${kind}${where}`);
    if (lines.join('\n').length > LIMITS.fieldValue - 40) {
      lines.pop();
      lines.push(`… and ${items.length - i} more${proposalId ? `: \`${statusCommand(proposalId)}\`` : ''}`);
      break;
    }
  }
  const text = lines.join('\n');
  return truncate(known ? text : `${text}\n(not verified by the judge)`, LIMITS.fieldValue);
}

export function constraintLines(proposal: Proposal, verdict: Verdict | null): string {
  const lines: string[] = [];
  const scope = proposal.scope_claim ?? {};
  if (scope.files_only?.length) {
    const shown = scope.files_only.slice(0, 8).map((f) => inlineCode(f, 80));
    const more = scope.files_only.length > 8 ? ` … +${scope.files_only.length - 8}` : '';
    lines.push(`Files only: ${shown.join(', ')}${more}`);
  }
  if (scope.max_lines !== undefined) lines.push(`At most ${scope.max_lines} lines`);
  if (scope.no_existing_code_deletion) lines.push('No deletion of existing code');
  const c = verdict?.constraints;
  if (c?.scope_limit) lines.push(`Judge: ${safeText(c.scope_limit, 300)}`);
  if (c?.require_human_review) lines.push('Judge: requires human review');
  return lines.length ? truncate(lines.join('\n'), 700) : 'none';
}

export function field(name: string, value: string, inline = false): APIEmbedField {
  return { name: truncate(name, LIMITS.fieldName), value: truncate(value || '-', LIMITS.fieldValue), inline };
}

export function approvalsText(needed: number, decisions: readonly DecisionRecord[]): string {
  const approvals = decisions.filter((d) => d.decision === 'approve');
  const head = `${approvals.length} of ${needed}`;
  if (approvals.length === 0) return head;
  return `${head}: ${approvals.map((d) => `${who(d.approver)} ${discordTimestamp(d.at, 'R')}`).join(', ')}`;
}

/** The footer starts with the workflow id: the notifier finds its own earlier post by it. */
export function footerText(workflowId: string, proposalId: string): string {
  return truncate(`${workflowId} · proposal ${proposalId.replace(CONTROL, '')}`, LIMITS.footer);
}

/** Approve, Reject, Reject with reason: each bound to the workflow id in its custom_id. */
export function renderButtons(workflowId: string): APIActionRowComponent<APIButtonComponent>[] {
  return [
    {
      type: 1,
      components: [
        { type: 2, style: 3, label: 'Approve', custom_id: buttonCustomId('approve', workflowId) },
        { type: 2, style: 4, label: 'Reject', custom_id: buttonCustomId('reject', workflowId) },
        { type: 2, style: 2, label: 'Reject with reason…', custom_id: buttonCustomId('reject_reason', workflowId) },
      ],
    },
  ];
}
