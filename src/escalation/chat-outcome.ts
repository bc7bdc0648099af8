/**
 * A proposal's outcome in a chat channel's words: who decided what, when and through which door, whether it is final,
 * and how a grant made with it ended. Discord and Slack share the words and differ only in their {@link ChatFormat}.
 */
import type { GrantEnding } from '../contracts/escalation';
import { isFinalStatus } from '../contracts/lifecycle';
import type { DecisionRecord, OutcomeStatus } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import { safeText } from './chat-text';
import { COLORS, discordTimestamp, who } from './discord-embed';

/** What a decided, expired or partly approved proposal looks like, from any source. */
export interface OutcomeView {
  workflow_id: string;
  status: OutcomeStatus;
  verdict: Verdict | null;
  decisions: DecisionRecord[];
  approvals_needed?: number;
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

/** A grant's end in a channel's words: "revoked by … at … after 2 of 5 uses", "expired after …", "used up (…)". */
export function grantEndedText(ended: GrantEnding, maxUses: number, fmt: ChatFormat): string {
  const count = `${ended.uses} of ${maxUses} uses`;
  if (ended.state === 'used_up') return `used up (${count})`;
  if (ended.state === 'expired') return `expired after ${count}`;
  const by = ended.by ? ` by ${fmt.who(ended.by)}` : '';
  const at = ended.at ? ` ${fmt.time(ended.at)}` : '';
  return `revoked${by}${at} after ${count}`;
}
