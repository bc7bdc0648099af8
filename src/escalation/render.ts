/**
 * The escalation message as Discord sees it: pure functions from an EscalationNotice (or an
 * outcome) to message JSON. Readable on a phone: the action, target, agent and tier first, then
 * both positions of the dispute, then the evidence and constraints. All proposal text is
 * untrusted: it is escaped (markdown, mentions, links, bidi tricks) and cut to Discord's limits,
 * and every payload sets `allowed_mentions: { parse: [] }` so nothing an agent writes can ping.
 */
import type {
  APIActionRowComponent,
  APIButtonComponent,
  APIEmbed,
  APIEmbedField,
  APIModalInteractionResponseCallbackData,
} from 'discord.js';
import { inboxProposalUrl } from '../contracts/inbox-link';
import type { Evidence, Proposal } from '../contracts/proposal';
import { isFinalStatus, type EvidenceStatus } from '../contracts/lifecycle';
import type { DecisionRecord, OutcomeStatus } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import { discordUserIdOf } from './approvers';
import { buttonCustomId, MAX_REASON_LENGTH, modalCustomId, REASON_INPUT_ID, revokeGrantCustomId } from './custom-id';
import type { GrantEnding } from '../contracts/escalation';
import type { EscalationNotice, GrantNotice, ReminderNotice, UncertainExecutionNotice } from './notifier';

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

export type AllowedMentions = { parse: []; users?: string[] };

/** What the REST API and discord.js accept for a message create or edit. */
export interface MessagePayload {
  content: string;
  embeds: APIEmbed[];
  components: APIActionRowComponent<APIButtonComponent>[];
  allowed_mentions: AllowedMentions;
}

/** An evidence item, with the judge's verification result when one is known. */
export type EvidenceView = Evidence & { verified?: boolean | null };

export type { EvidenceStatus } from '../contracts/lifecycle';
export interface EvidenceCheckView {
  index: number;
  status: EvidenceStatus;
}

/** What a decided, expired or partly approved proposal looks like, from any source. */
export interface OutcomeView {
  workflow_id: string;
  status: OutcomeStatus;
  verdict: Verdict | null;
  decisions: DecisionRecord[];
  approvals_needed?: number;
}

// ---------------------------------------------------------------------------------------------
// Escaping and limits

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Every way text can start a new line in Discord: untrusted text is one line wherever it appears, so a line (and the
 * mark at its start) is always agent-judge's own. A newline in an evidence title once rendered as a line of its own,
 * `✅ Issue 42: requested by scott`, as if the judge had verified it.
 */
// eslint-disable-next-line no-control-regex -- vertical tab and form feed are what this matches
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/g;

/**
 * The marks agent-judge uses to state facts (evidence checks, outcomes, warnings) and their look-alikes: they never
 * appear inside untrusted text, which could otherwise claim a check that never ran.
 */
const RESERVED_MARK = new RegExp(
  '[\u2705\u274c\u2754\u26a0\u23f3\u231b\u23f0\u25ab\u2713\u2714\u2611\u2716-\u2718\u{1f7e2}\u{1f534}\u{1f512}]\ufe0f?',
  'gu',
);

/**
 * Untrusted text made inert for Discord markdown: no formatting, no mentions (`<@…>`,
 * `@everyone`), no masked or auto links, no headings or quotes, no direction overrides.
 * It still reads the same.
 */
export function escapeText(raw: string): string {
  return raw
    .replace(LINE_BREAK, ' ⏎ ')
    .replace(CONTROL, '')
    .replace(/[\\*_~`|<>[\]()]/g, '\\$&')
    .replace(/^(\s*)([#-])/gm, '$1\\$2')
    .replace(/^(\s*\d+)\./gm, '$1\\.')
    .replace(/:\/\//g, '\\://')
    .replace(/@/g, '@\u200b')
    .replace(RESERVED_MARK, '(icon)');
}

/**
 * Untrusted text for a channel that shows it as plain text (Slack's `plain_text`): no control characters, no
 * direction overrides, none of agent-judge's marks, and one line unless `keepLines` (for a block that holds nothing
 * but this text, so a line of it cannot pass for one of agent-judge's).
 */
export function inertText(raw: string, { keepLines = false }: { keepLines?: boolean } = {}): string {
  const lines = keepLines ? raw.replace(OTHER_LINE_BREAK, '\n') : raw.replace(LINE_BREAK, ' ⏎ ');
  // CONTROL spares the newline.
  return lines.replace(CONTROL, '').replace(RESERVED_MARK, '(icon)');
}

/** Every line break but the newline, which {@link inertText} keeps with `keepLines`. */
// eslint-disable-next-line no-control-regex -- vertical tab and form feed are what this matches
const OTHER_LINE_BREAK = /\r\n?|[\u000b\u000c\u0085\u2028\u2029]/g;

/** Cuts to `max` characters with an ellipsis, never splitting a surrogate pair or an escape. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = text.slice(0, Math.max(0, max - 1));
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  // A trailing lone backslash would escape the ellipsis; drop it.
  const trailing = /\\+$/.exec(cut)?.[0].length ?? 0;
  if (trailing % 2 === 1) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The command that shows a proposal in full: every visible cut names it. */
export function statusCommand(proposalId: string): string {
  return `agent-judge status ${proposalId.replace(CONTROL, '').replace(/[`\s]/g, '')}`;
}

/** What ends a cut: how much is missing and where to read it, so a long harmless prefix cannot hide the rest. */
function cutNote(missing: number, proposalId: string): string {
  return `… ${missing} more characters: \`${statusCommand(proposalId)}\``;
}

/**
 * Escapes and bounds untrusted text like {@link safeText}, but a cut says so: `… N more characters: \`agent-judge
 * status <id>\``, N counted in the original text.
 */
export function cutText(raw: string, max: number, proposalId: string): string {
  const whole = escapeText(raw);
  if (whole.length <= max) return whole;
  let keep = Math.max(0, max - cutNote(raw.length, proposalId).length - 1);
  for (;;) {
    const head = raw.slice(0, keep).replace(/[\ud800-\udbff]$/, '');
    const escaped = escapeText(head).replace(/\\+$/, (t) => (t.length % 2 ? t.slice(0, -1) : t));
    const text = `${escaped} ${cutNote(raw.length - head.length, proposalId)}`;
    if (text.length <= max || keep === 0) return text.slice(0, max);
    keep = Math.max(0, keep - (text.length - max));
  }
}

/** Escapes, then bounds: what every piece of proposal text goes through. */
export function safeText(raw: string, max: number): string {
  // Cut the raw text first so the escaped result is close to the limit, then bound it exactly.
  return truncate(escapeText(truncate(raw, max)), max);
}

/**
 * Text for a code block: nothing inside renders, only a closing fence must be broken. A cut is stated after the
 * block when a proposal id is given.
 */
function codeBlock(raw: string, lang: string, max: number, proposalId?: string): string {
  const fence = '```';
  const body = raw.replace(CONTROL, '').replace(/```/g, '`\u200b`\u200b`');
  const frame = fence.length * 2 + lang.length + 2;
  if (body.length <= max - frame || proposalId === undefined) {
    return `${fence}${lang}\n${truncate(body, Math.max(1, max - frame))}\n${fence}`;
  }
  const room = Math.max(1, max - frame - cutNote(body.length, proposalId).length - 1);
  const head = body.slice(0, room).replace(/[\ud800-\udbff]$/, '');
  return `${fence}${lang}\n${head}\n${fence}\n${cutNote(body.length - head.length, proposalId)}`;
}

/** Inline code for a short untrusted value (a URL, an id): shown, copyable, never a link. */
function inlineCode(raw: string, max: number): string {
  const body = truncate(raw.replace(CONTROL, '').replace(/[`\n]/g, ' '), max - 2);
  return `\`${body || ' '}\``;
}

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

// ---------------------------------------------------------------------------------------------
// Pieces

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

function describeValue(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v == null) return String(v);
  try {
    // JSON.stringify gives undefined for functions and symbols, which JSON proposals never carry.
    return JSON.stringify(v) ?? `[${typeof v}]`;
  } catch {
    return `[${typeof v}]`;
  }
}

/** `repo: acme/api, branch: fix-1`: the target on one short line. */
export function describeTarget(proposal: Proposal): string {
  const entries = Object.entries(proposal.target ?? {});
  if (entries.length === 0) return '(no target)';
  return entries.map(([k, v]) => `${k}: ${describeValue(v)}`).join(', ');
}

function confidenceText(c: number | null | undefined): string {
  return c === null || c === undefined ? '' : ` · confidence ${Math.round(c * 100)}%`;
}

export const EVIDENCE_MARK: Record<EvidenceStatus, string> = {
  verified: '✅',
  failed: '❌ check failed:',
  'other-repo': '❌ other repository:',
  unverifiable: '❔ unverifiable:',
};

/**
 * The judge's evidence checks when the notice carries them: `evidence_checks` on the notice, or
 * `verdict.judge.evidence.checks`. Read defensively: an unknown shape means "not known".
 */
export function evidenceChecksOf(notice: EscalationNotice): Map<number, EvidenceStatus> {
  const source =
    (notice as { evidence_checks?: unknown }).evidence_checks ??
    notice.verdict?.evidence_checks ??
    (notice.verdict?.judge as { evidence?: { checks?: unknown } } | undefined)?.evidence?.checks;
  const out = new Map<number, EvidenceStatus>();
  if (!Array.isArray(source)) return out;
  for (const c of source as Array<Partial<EvidenceCheckView>>) {
    if (typeof c?.index === 'number' && typeof c.status === 'string' && c.status in EVIDENCE_MARK)
      out.set(c.index, c.status);
  }
  return out;
}

function evidenceLines(
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

function constraintLines(proposal: Proposal, verdict: Verdict | null): string {
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

function field(name: string, value: string, inline = false): APIEmbedField {
  return { name: truncate(name, LIMITS.fieldName), value: truncate(value || '-', LIMITS.fieldValue), inline };
}

function approvalsText(needed: number, decisions: readonly DecisionRecord[]): string {
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

// ---------------------------------------------------------------------------------------------
// Messages

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
 * How a chat channel writes the pieces of an outcome: a person, a moment, untrusted text. Discord and Slack share
 * the outcome's words ({@link describeOutcome}) and differ only here.
 */
export interface ChatFormat {
  /** The `via` of decisions made in this channel: those lines do not repeat it. */
  channel: 'discord' | 'slack';
  who(approver: string): string;
  /** A moment, in the reader's own time zone where the channel can. */
  time(iso: string): string;
  /** Untrusted text, made inert and bounded. */
  text(raw: string, max: number): string;
}

export const DISCORD_FORMAT: ChatFormat = {
  channel: 'discord',
  who,
  time: (iso) => discordTimestamp(iso, 'f'),
  text: safeText,
};

const VIA_LABEL: Record<DecisionRecord['via'], string> = {
  cli: 'CLI',
  api: 'API',
  discord: 'Discord',
  slack: 'Slack',
  inbox: 'the inbox',
};

function decisionLine(d: DecisionRecord, fmt: ChatFormat): string {
  const verb = d.decision === 'approve' ? '✅ approved' : '❌ rejected';
  const via = d.via === fmt.channel ? '' : ` via ${VIA_LABEL[d.via] ?? 'API'}`;
  const reason = d.reason ? `: ${fmt.text(d.reason, 300)}` : '';
  return `${fmt.who(d.approver)} ${verb} ${fmt.time(d.at)}${via}${reason}`;
}

/** The outcome in words: headline (one line) and details (who, when, what). */
export function describeOutcome(
  o: OutcomeView,
  fmt: ChatFormat = DISCORD_FORMAT,
): { headline: string; details: string; color: number; final: boolean } {
  const approvals = o.decisions.filter((d) => d.decision === 'approve');
  const rejects = o.decisions.filter((d) => d.decision === 'reject');
  const lines = o.decisions.map((d) => decisionLine(d, fmt));
  if (!isFinalStatus(o.status)) {
    const needed = Math.max(1, o.approvals_needed ?? 1);
    const waiting = Math.max(0, needed - approvals.length);
    const headline = `⏳ ${approvals.length} of ${needed} approvals · waiting for ${waiting} more`;
    return { headline, details: lines.join('\n') || 'No decisions yet.', color: COLORS.pending, final: false };
  }
  if (
    o.verdict?.decided_by === 'timeout' ||
    (o.decisions.length === 0 && o.status === 'rejected' && !o.verdict?.decided_by.startsWith('human:'))
  ) {
    const expired = o.verdict?.decided_by === 'timeout';
    const headline = expired
      ? '⌛ Expired: no decision before the deadline, so it was rejected'
      : `❌ Rejected (${fmt.text(o.verdict?.decided_by ?? 'unknown', 64)})`;
    const details = [...lines, o.verdict?.reason ? fmt.text(o.verdict.reason, 400) : ''].filter(Boolean).join('\n');
    return {
      headline,
      details: details || 'No approver decided in time.',
      color: expired ? COLORS.expired : COLORS.rejected,
      final: true,
    };
  }
  if (rejects.length > 0 || o.status === 'rejected') {
    const by = rejects.length ? ` by ${rejects.map((d) => fmt.who(d.approver)).join(', ')}` : '';
    return {
      headline: `❌ Rejected${by}`,
      details: lines.join('\n') || 'Rejected.',
      color: COLORS.rejected,
      final: true,
    };
  }
  const by = approvals.length ? ` by ${approvals.map((d) => fmt.who(d.approver)).join(', ')}` : '';
  const tail =
    o.status === 'executed'
      ? ' · executed'
      : o.status === 'failed'
        ? ' · execution failed'
        : o.status === 'uncertain'
          ? ' · ⚠️ execution uncertain: check whether it happened'
          : o.status === 'pending'
            ? ' · executing'
            : '';
  return {
    headline: `✅ Approved${by}${tail}`,
    details: lines.join('\n') || 'Approved.',
    color: COLORS.approved,
    final: true,
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

/** A grant's end in a channel's words: "revoked by … at … after 2 of 5 uses", "expired after …", "used up (…)". */
export function grantEndedText(ended: GrantEnding, maxUses: number, fmt: ChatFormat): string {
  const count = `${ended.uses} of ${maxUses} uses`;
  if (ended.state === 'used_up') return `used up (${count})`;
  if (ended.state === 'expired') return `expired after ${count}`;
  const by = ended.by ? ` by ${fmt.who(ended.by)}` : '';
  const at = ended.at ? ` ${fmt.time(ended.at)}` : '';
  return `revoked${by}${at} after ${count}`;
}
