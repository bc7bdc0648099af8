/**
 * Untrusted text (whatever a proposal or a person's reason carries) made safe for a chat channel: escaped for Discord
 * markdown or made inert for plain text, kept to one line, and cut to a limit with a note that says where to read the
 * rest. None of it can format, ping, link, or pass for one of agent-judge's own marks.
 */

import { displayText, MARK_STAND_IN } from '../contracts/untrusted-text';

/** Control characters and direction overrides: never shown, wherever untrusted text goes. */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Untrusted text made inert for Discord markdown: first the one display rule (contracts/untrusted-text.ts: one line,
 * every invisible or format character named, agent-judge's marks as `(icon)`), then no formatting, no mentions
 * (`<@…>`, `@everyone`), no masked or auto links, no headings or quotes. It still reads the same.
 */
export function escapeText(raw: string): string {
  return (
    displayText(raw)
      .replace(/[\\*_~`|<>[\]()]/g, '\\$&')
      // The rule's stand-in for one of our marks reads as it always did: `(icon)`, not `\(icon\)`.
      .replaceAll(`\\(${MARK_STAND_IN.slice(1, -1)}\\)`, MARK_STAND_IN)
      .replace(/^(\s*)([#-])/gm, '$1\\$2')
      .replace(/^(\s*\d+)\./gm, '$1\\.')
      .replace(/:\/\//g, '\\://')
      .replace(/@/g, '@\u200b')
  );
}

/**
 * Untrusted text for a channel that shows it as plain text (Slack's `plain_text`): the one display rule
 * (contracts/untrusted-text.ts), one line unless `keepLines` (for a block that holds nothing but this text, so a
 * line of it cannot pass for one of agent-judge's).
 */
export function inertText(raw: string, { keepLines = false }: { keepLines?: boolean } = {}): string {
  return displayText(raw, { keepLines });
}

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
export function codeBlock(raw: string, lang: string, max: number, proposalId?: string): string {
  const fence = '```';
  const body = displayText(raw, { keepLines: true }).replace(/```/g, '`\u200b`\u200b`');
  const frame = fence.length * 2 + lang.length + 2;
  if (body.length <= max - frame || proposalId === undefined) {
    return `${fence}${lang}\n${truncate(body, Math.max(1, max - frame))}\n${fence}`;
  }
  const room = Math.max(1, max - frame - cutNote(body.length, proposalId).length - 1);
  const head = body.slice(0, room).replace(/[\ud800-\udbff]$/, '');
  return `${fence}${lang}\n${head}\n${fence}\n${cutNote(body.length - head.length, proposalId)}`;
}

/** Inline code for a short untrusted value (a URL, an id): shown, copyable, never a link. */
export function inlineCode(raw: string, max: number): string {
  const body = truncate(displayText(raw).replace(/`/g, ' '), max - 2);
  return `\`${body || ' '}\``;
}
