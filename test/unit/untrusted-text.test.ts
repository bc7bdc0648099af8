/**
 * Agent-controlled text is one type, rendered by one rule everywhere (src/contracts/untrusted-text.ts; issue 38,
 * second review): for any generated string, what each renderer shows (Discord, Slack, the inbox, the CLI) holds no
 * control, format, bidi, zero-width, tag or other invisible character, no line break of the agent's, and none of
 * agent-judge's marks; inserting an invisible character always changes what is shown. Seeded (no fast-check in this
 * repository): set UNTRUSTED_TEXT_SEED to replay a run.
 */
import { describe, expect, it } from 'vitest';
import { renderOutcome as renderCliOutcome } from '../../src/cli/outcome-text';
import type { ProposalOutcome } from '../../src/contracts/status';
import {
  cutDisplayText,
  displayText,
  hiddenCharacterIn,
  jsonForDisplay,
  RESERVED_MARKS,
} from '../../src/contracts/untrusted-text';
import { codeBlock, cutText, escapeText, inlineCode, safeText } from '../../src/escalation/chat-text';
import { renderEscalation } from '../../src/escalation/render';
import { plain, renderSlackEscalation, slackEscape } from '../../src/escalation/slack-render';
import { agentBlock, agentInline, editPathLabel } from '../../src/inbox/html';
import { sampleNotice } from '../helpers/escalation-notice';
import { prng } from '../helpers/shell-grammar';

const SEED = Number(process.env.UNTRUSTED_TEXT_SEED ?? 0x38);
const CASES = 400;

/** The characters an attacker reaches for, by kind: each generated string mixes them with ordinary text. */
const HOSTILE = [
  // bidi controls: embeddings, overrides, isolates, marks, the Arabic letter mark
  ...'\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c',
  // zero-width, word joiner, invisible operators, BOM, soft hyphen, Mongolian vowel separator, fillers
  ...'\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u115f\u1160\u3164\uffa0\u034f',
  // variation selectors, plain and supplementary ("emoji smuggling")
  '\ufe00',
  '\ufe0e',
  '\ufe0f',
  '\u{e0100}',
  '\u{e01ef}',
  // tags (ASCII smuggling)
  '\u{e0001}',
  '\u{e0041}',
  '\u{e0061}',
  '\u{e007f}',
  // line breaks of every kind, controls
  ...'\n\r\u000b\u000c\u0085\u2028\u2029\t\u0000\u0007\u001b\u007f\u009b',
  '\r\n',
  // agent-judge's marks and look-alikes, with and without the emoji selector
  ...'✅❌❔⚠⏳⌛⏰▫✓✔☑✖✗✘',
  '✅\ufe0f',
  '⚠️',
  '▫️',
  '🟢',
  '🔴',
  '🔒',
  // markup each channel gives meaning to, and look-alikes of our own visible forms
  ...'<>&@*_~`|#[]():/\\"\'',
  '⟨U+200B⟩',
  '⏎',
  '(icon)',
  '😀',
  '\ud800',
  '\udfff',
];

function generated(seed: number, count: number): string[] {
  const rand = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let s = '';
    const length = Math.floor(rand() * 40);
    for (let i = 0; i < length; i++) {
      const r = rand();
      if (r < 0.45) s += pick(HOSTILE);
      else if (r < 0.8) s += pick([...'ops-main verified by the judge 0123456789']);
      else s += String.fromCodePoint(Math.floor(rand() * 0x30000));
    }
    out.push(s);
  }
  return out;
}

const INPUTS = generated(SEED, CASES);

/** What may appear where the input went in: no invisible character (the agent's newlines only with `block`). */
function expectShownSafely(where: string, raw: string, shown: string, { block = false } = {}): void {
  const context = `${where} of ${JSON.stringify(raw)} (seed ${SEED}): ${JSON.stringify(shown)}`;
  expect(hiddenCharacterIn(shown, { block }), context).toBeNull();
  expect(RESERVED_MARKS.test(shown), context).toBe(false);
}

/**
 * The only invisible character agent-judge itself writes into a chat message: U+200B where it breaks a mention
 * (`@`), an auto-link (`://`) or a code fence. Any U+200B of the agent's is named (`⟨U+200B⟩`) before these are
 * added, so removing exactly these leaves nothing invisible unless the rule let one through.
 */
function withoutOwnBreaks(text: string): string {
  return text
    .replace(/@\u200b/g, '@')
    .replace(/:\/\u200b\//g, '://')
    .replace(/`\u200b`\u200b`/g, '```');
}

describe('the one display rule', () => {
  it('shows any text without an invisible character, a line break or a mark of ours', () => {
    for (const raw of INPUTS) {
      expectShownSafely('displayText', raw, displayText(raw));
      expectShownSafely('displayText keepLines', raw, displayText(raw, { keepLines: true }), { block: true });
      const cut = cutDisplayText(raw, 30, 'agent-judge status p-1');
      expectShownSafely('cutDisplayText', raw, cut);
      expect(cut.length).toBeLessThanOrEqual(30);
    }
  });

  it('names what it does not show, so a look-alike never renders like the original', () => {
    expect(displayText('ops-\u200bmain')).toBe('ops-⟨U+200B⟩main');
    expect(displayText('a\u202eb\u2066c\u061cd\u2060e\ufefff')).toBe('a⟨U+202E⟩b⟨U+2066⟩c⟨U+061C⟩d⟨U+2060⟩e⟨U+FEFF⟩f');
    expect(displayText('x\u{e0041}\u{e007f}')).toBe('x⟨U+E0041⟩⟨U+E007F⟩');
    expect(displayText('✅ done\n⚠️ ok')).toBe('(icon) done ⏎ (icon) ok');
    // An emoji keeps its own presentation selector; a selector anywhere else is named.
    expect(displayText('😀\ufe0f a\ufe0f 😀\ufe0f\ufe0f')).toBe('😀\ufe0f a⟨U+FE0F⟩ 😀\ufe0f⟨U+FE0F⟩');
    const rand = prng(SEED + 1);
    const invisible = [...'\u202e\u2066\u200b\u200c\u200d\u2060\u061c\ufeff\u00ad', '\u{e0041}', '\u{e0100}'];
    for (const raw of INPUTS) {
      const at = Math.floor(rand() * (raw.length + 1));
      const c = invisible[Math.floor(rand() * invisible.length)]!;
      const changed = raw.slice(0, at) + c + raw.slice(at);
      expect(displayText(changed), JSON.stringify(changed)).not.toBe(displayText(raw));
    }
  });

  it('cuts with the standard note, counted in the original text', () => {
    for (const max of [50, 60, 99]) {
      const cut = cutDisplayText('x'.repeat(100), max, 'agent-judge status p-1');
      const [, kept, missing] = /^(x*) … (\d+) more characters: agent-judge status p-1$/.exec(cut) ?? [];
      expect(cut.length, cut).toBeLessThanOrEqual(max);
      expect(kept!.length + Number(missing)).toBe(100);
    }
    expect(cutDisplayText('short', 40)).toBe('short');
  });

  it('JSON for a terminal parses to the same value, with nothing hidden or faked on the screen', () => {
    for (const raw of INPUTS) {
      const value = { [raw]: raw, list: [raw, { raw }] };
      const text = jsonForDisplay(JSON.stringify(value, null, 2));
      expect(JSON.parse(text)).toEqual(value);
      expectShownSafely('jsonForDisplay', raw, text, { block: true });
    }
  });
});

describe('every renderer applies it', () => {
  it('Discord: escaped text, cuts, inline code and code blocks', () => {
    for (const raw of INPUTS) {
      expectShownSafely('escapeText', raw, withoutOwnBreaks(escapeText(raw)));
      expectShownSafely('safeText', raw, withoutOwnBreaks(safeText(raw, 50)));
      expectShownSafely('cutText', raw, withoutOwnBreaks(cutText(raw, 80, 'p-1')));
      expectShownSafely('inlineCode', raw, inlineCode(raw, 60));
      expectShownSafely('codeBlock', raw, withoutOwnBreaks(codeBlock(raw, 'json', 200, 'p-1')), { block: true });
    }
  });

  it('Slack: mrkdwn and plain text', () => {
    for (const raw of INPUTS) {
      expectShownSafely('slackEscape', raw, withoutOwnBreaks(slackEscape(raw, 80)));
      expectShownSafely('plain', raw, withoutOwnBreaks(plain(raw, 80).text));
      expectShownSafely('plain keepLines', raw, withoutOwnBreaks(plain(raw, 80, true).text), { block: true });
    }
  });

  it('the inbox: inline, blocks, and an MCP argument name in an edit label', () => {
    for (const raw of INPUTS) {
      expectShownSafely('agentInline', raw, agentInline(raw).html);
      expectShownSafely('agentBlock', raw, agentBlock('parameters', raw).html, { block: true });
      const label = editPathLabel(`parameters.arguments.${raw}`).html;
      expectShownSafely('editPathLabel', raw, label);
      // The name sits inside the agent's frame, never beside our words.
      expect(label.startsWith('parameters.arguments.<span class="agent">')).toBe(true);
    }
    expect(editPathLabel('parameters.arguments.limit\u202e✅ ok').html).toBe(
      'parameters.arguments.<span class="agent">limit⟨U+202E⟩(icon) ok</span>',
    );
    expect(editPathLabel('scope_claim.max_lines').html).toBe('scope_claim.max_lines');
  });

  it("the CLI's short form: one line per row, whatever the model or the agent wrote", () => {
    const outcome = (text: string): ProposalOutcome => ({
      proposal_id: 'p-1',
      workflow_id: 'p-1',
      status: 'failed',
      verdicts: [],
      verdict: {
        proposal_id: 'p-1',
        verdict: 'APPROVE',
        reason: text,
        constraints: { require_human_review: false },
        escalation: null,
        confidence: 1,
        decided_by: 'policy',
        tier: 'no-judge',
      },
      execution: { status: 'failed', executor: 'exec', error: text } as ProposalOutcome['execution'],
    });
    const rows = renderCliOutcome(outcome('x')).split('\n').length;
    for (const raw of INPUTS) {
      const shown = renderCliOutcome(outcome(raw));
      expect(shown.split('\n').length, JSON.stringify(raw)).toBe(rows);
      expectShownSafely('renderOutcome', raw, shown, { block: true });
    }
  });

  it('whole chat messages: no mark, nothing invisible; on Discord, no line of the agent outside a code block', () => {
    const strings = (value: unknown): string[] =>
      typeof value === 'string'
        ? [value]
        : typeof value === 'object' && value !== null
          ? Object.values(value).flatMap(strings)
          : [];
    const marks = (text: string) => [...text].filter((c) => RESERVED_MARKS.test(c)).length;
    const rendered = (raw: string) => {
      const notice = sampleNotice({
        proposal: {
          justification: raw,
          target: { account: raw },
          parameters: { memo: raw, [raw]: 1 },
          cited_evidence: [{ type: raw, title: raw, url: raw }],
        },
        dispute: { reason: raw, actor_position: raw, judge_position: raw, judge_confidence: null },
      });
      return { discord: strings(renderEscalation(notice)), slack: strings(renderSlackEscalation(notice)) };
    };
    const benign = rendered('x');
    for (const raw of INPUTS) {
      const got = rendered(raw);
      const context = JSON.stringify(raw);
      expect(got.discord.map(marks), context).toEqual(benign.discord.map(marks));
      expect(got.slack.map(marks), context).toEqual(benign.slack.map(marks));
      for (const s of [...got.discord, ...got.slack])
        expect(hiddenCharacterIn(withoutOwnBreaks(s), { block: true }), context).toBeNull();
      // Slack's framed plain-text blocks keep the agent's lines by design; Discord keeps them only in a code block.
      got.discord.forEach((s, i) => {
        if (!s.startsWith('```json\n'))
          expect(s.split('\n').length, `${context}: ${s}`).toBe(benign.discord[i]!.split('\n').length);
      });
    }
  });
});
