/**
 * Agent-controlled text, made safe to show a person: the one rule every renderer applies (Discord, Slack, the web
 * inbox, the CLI's short form). An agent controls every byte of a proposal: its fields, an MCP tool's name and
 * argument names, what a model wrote about them, a chat payload. That text is data for an approver to read, never
 * agent-judge's own words, so it must never be able to look like them or hide what it is:
 *
 * - one line: every line break (`\n`, `\r\n`, `\r`, vertical tab, form feed, NEL, U+2028, U+2029) shows as ` ⏎ `, so
 *   no line of it (and no mark at the start of one) can pass for one of agent-judge's; a renderer that frames a
 *   block of the agent's text may keep newlines (`keepLines`), every other break becoming `\n`;
 * - nothing invisible: format characters (Unicode category Cf: bidi embeddings, overrides and isolates, LRM/RLM,
 *   U+061C, zero-width space and joiners, word joiner, BOM, soft hyphen, tags U+E0000..U+E007F, ...), every other
 *   default-ignorable code point (Hangul fillers, combining grapheme joiner), control characters, lone surrogates
 *   and variation selectors not directly after an emoji show as `⟨U+200B⟩`, so `ops-main` and `ops-⟨U+200B⟩main`
 *   never render alike and a direction override cannot reorder what follows it; a tab is a space;
 * - none of agent-judge's fact marks (✅ ❌ ❔ ⚠️ ⏳ ▫️ and their look-alikes): each reads `(icon)`, so untrusted
 *   text can never claim a check that never ran (docs/security.md, finding 5);
 * - a cut says so: `… N more characters`, N counted in the original text, and where to read it whole.
 *
 * The rule only shows; it never decides. Matching (deny patterns, the injection scan) reads
 * `policy/normalise.ts`'s form, and the action keeps its raw bytes. Each renderer still applies its own syntax
 * escaping (Discord markdown, Slack mrkdwn, HTML) after this rule. Pure and deterministic.
 */

/** Where an approver reads what a cut left out, e.g. `agent-judge status <id>`. */
export type CutWhere = string | undefined;

/**
 * Every way text can start a new line on some screen: untrusted text is one line wherever it appears. A newline in
 * an evidence title once rendered as a line of its own, `✅ Issue 42: requested by scott`, as if the judge had
 * verified it.
 */
// eslint-disable-next-line no-control-regex -- vertical tab and form feed are what this matches
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/g;

/** Every line break but the newline, which a framed block keeps. */
// eslint-disable-next-line no-control-regex -- vertical tab and form feed are what this matches
const OTHER_LINE_BREAK = /\r\n?|[\u000b\u000c\u0085\u2028\u2029]/g;

/** What a line break reads as on one line. */
export const LINE_BREAK_MARK = ' ⏎ ';

/** What each of agent-judge's marks reads as inside untrusted text. */
export const MARK_STAND_IN = '(icon)';

/**
 * The marks agent-judge uses to state facts (evidence checks, outcomes, warnings, waiting) and their look-alikes,
 * each with the emoji variation selector that may follow it.
 */
const MARK_CHARS =
  '\u2705\u274c\u2754\u26a0\u23f3\u231b\u23f0\u25ab\u2713\u2714\u2611\u2716-\u2718\u{1f7e2}\u{1f534}\u{1f512}';
const RESERVED_MARK = new RegExp(`[${MARK_CHARS}]\ufe0f?`, 'gu');

/** The same set, for tests and checks that a rendered text holds none of them. */
export const RESERVED_MARKS = new RegExp(`[${MARK_CHARS}]`, 'u');

/**
 * A variation selector is kept only where it does its job: one text or emoji presentation selector (U+FE0E, U+FE0F)
 * directly after an emoji. Anywhere else (after a letter, in a run, the supplementary selectors that carry
 * "emoji smuggling") it hides data and is shown like any other invisible character.
 */
const PRESENTATION_AFTER_EMOJI = /(?<=\p{Extended_Pictographic})[\ufe0e\ufe0f]/uy;

/**
 * What never shows as itself: controls (Cc; the line breaks are handled first, tab becomes a space), format
 * characters (Cf), lone surrogates (Cs), and every default-ignorable code point (variation selectors, fillers,
 * unassigned ignorables).
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

/** `⟨U+200B⟩`: an invisible code point, named. */
export function visibleCodePoint(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return `⟨U+${cp.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/** Options of {@link displayText}. */
export interface DisplayOptions {
  /**
   * Keep newlines (other breaks become `\n`): only for a renderer that shows the text in a block framed as the
   * agent's, where no line of it can sit at the start of one of agent-judge's.
   */
  keepLines?: boolean;
}

/**
 * Untrusted text as a person may see it: one line (or, with `keepLines`, lines inside the agent's frame), every
 * invisible or format character named (`⟨U+202E⟩`), agent-judge's marks as `(icon)`. No syntax escaping: each
 * renderer escapes for its own markup after this.
 */
export function displayText(raw: string, { keepLines = false }: DisplayOptions = {}): string {
  const lines = keepLines ? raw.replace(OTHER_LINE_BREAK, '\n') : raw.replace(LINE_BREAK, LINE_BREAK_MARK);
  const marked = lines.replace(RESERVED_MARK, MARK_STAND_IN);
  return marked.replace(INVISIBLE, (ch, offset: number, whole: string) => {
    if (ch === '\n' && keepLines) return ch;
    if (ch === '\t') return keepLines ? ch : ' ';
    PRESENTATION_AFTER_EMOJI.lastIndex = offset;
    if (PRESENTATION_AFTER_EMOJI.test(whole)) return ch;
    return visibleCodePoint(ch);
  });
}

/** True when {@link displayText} shows `raw` exactly as it is: nothing hidden, no mark, one line. */
export function displaysAsIs(raw: string): boolean {
  return displayText(raw) === raw;
}

/** The standard note that ends a cut: how much is missing and, when known, where to read it whole. */
export function moreCharactersNote(missing: number, where?: CutWhere): string {
  return `… ${missing} more characters${where ? `: ${where}` : ''}`;
}

/** `text` without a dangling high surrogate or a half-written `⟨U+…⟩` at its end. */
function cleanEnd(text: string): string {
  return text.replace(/[\ud800-\udbff]$/, '').replace(/⟨[^⟩]*$/, '');
}

/**
 * {@link displayText} within `max` characters; when the shown text is longer, the head that fits followed by
 * {@link moreCharactersNote} (N counted in the raw text, so a long harmless prefix cannot hide the rest). The cut
 * never splits a surrogate pair, a ` ⏎ ` or a `⟨U+…⟩`.
 */
export function cutDisplayText(raw: string, max: number, where?: CutWhere, options: DisplayOptions = {}): string {
  const whole = displayText(raw, options);
  if (whole.length <= max) return whole;
  let keep = Math.max(0, max - moreCharactersNote(raw.length, where).length - 1);
  for (;;) {
    const head = raw.slice(0, keep).replace(/[\ud800-\udbff]$/, '');
    const shown = displayText(head, options);
    const text = `${shown} ${moreCharactersNote(raw.length - head.length, where)}`;
    if (text.length <= max || keep === 0) return text.length <= max ? text : cleanEnd(text.slice(0, max));
    keep = Math.max(0, keep - (text.length - max));
  }
}

/** A line break of any kind, and any character {@link displayText} would name instead of showing. */
const NEVER_SHOWN = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * The first character in a rendered text that must never be there where untrusted text went in: a control or
 * format character, a lone surrogate, a default-ignorable (an emoji's own presentation selector aside, as
 * {@link displayText} keeps it) or a line separator; a newline or a tab only in a `block` (as `keepLines` keeps
 * them). For tests and assertions over each renderer's output. Null when there is none.
 */
export function hiddenCharacterIn(
  text: string,
  { block = false }: { block?: boolean } = {},
): { index: number; codePoint: string } | null {
  for (const m of text.matchAll(NEVER_SHOWN)) {
    const ch = m[0];
    if (block && (ch === '\n' || ch === '\t')) continue;
    PRESENTATION_AFTER_EMOJI.lastIndex = m.index;
    if (PRESENTATION_AFTER_EMOJI.test(text)) continue;
    return { index: m.index, codePoint: visibleCodePoint(ch) };
  }
  return null;
}

/** What {@link jsonForDisplay} writes as a `\u` escape. */
const JSON_ESCAPED = new RegExp(
  `[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}\\p{Default_Ignorable_Code_Point}${MARK_CHARS}]`,
  'gu',
);

/**
 * Untrusted text as JSON for display (the CLI's `list` and `--json` on a terminal, a grant's quoted values): the same
 * JSON (it parses to the same value), with every character {@link displayText} would name, every line separator and
 * each of agent-judge's marks written as a `\u` escape, so it cannot reorder, hide or fake anything either.
 */
export function jsonForDisplay(json: string): string {
  return json.replace(JSON_ESCAPED, (ch) => {
    if (ch === '\n') return ch;
    return Array.from({ length: ch.length }, (_, i) => `\\u${ch.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
  });
}
