/**
 * The injection scan: patterns of text addressed to a model (a judge, or the agent itself), matched on folded text.
 * The judge reads every proposal with it (src/judge/prompt.ts); the gate reads tool results on their way back to the
 * agent with it (src/gate/provenance.ts). Pure.
 */
import { normaliseForMatching } from './normalise';

/** Patterns of text addressed to a judge model. Matched after NFKC folding and zero-width removal. */
export const INJECTION_MARKERS: Array<[name: string, re: RegExp]> = [
  [
    'ignore-instructions',
    new RegExp(
      String.raw`\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?` +
        String.raw`\b(?:previous|prior|above|earlier|all|any|system|your|the)\b[^.\n]{0,24}?` +
        String.raw`\b(?:instructions?|rules?|prompts?|guidelines|polic(?:y|ies)|directives?)\b`,
      'u',
    ),
  ],
  ['role-switch', /\byou are now\b|\bnew instructions\b|\bact as (?:the|a|an) (?:judge|admin|system)\b/u],
  ['system-prompt', /\b(?:system|developer)\s+(?:prompt|message|override|instruction)s?\b/u],
  ['fake-verdict', /"?\bverdict\b"?\s*[:=]\s*"?(?:approve|reject|clarify)\b/u],
  ['fake-confidence', /"\s*confidence\s*"\s*:\s*[0-9.]+/u],
  ['delimiter', /<\s*\/?\s*(?:proposal|user_task)_json\b|<\s*\/?\s*(?:system|assistant|user|instructions?)\s*>/u],
  ['chat-template', /<\|[a-z_]{2,20}\|>|\[\/?inst\]|<<\/?sys>>|^\s*#{2,}\s*(?:system|assistant)\b/mu],
  ['approve-request', /\b(?:approve|authorize|allow) this (?:proposal|request|action)\b|\bmust be approved\b/u],
];

/** Folds look-alike forms together: {@link normaliseForMatching} (NFKC, no invisible characters), lower case. */
export function foldForMatching(text: string): string {
  return normaliseForMatching(text).toLowerCase().replace(/\s+/gu, ' ');
}

/**
 * The markers in one text (a tool's result on its way back to the agent), each name once: the judge's scan on the
 * same folded text, cut to its first 256 KiB.
 */
export function scanText(raw: string): string[] {
  const folded = foldForMatching(raw.length > 256 * 1024 ? raw.slice(0, 256 * 1024) : raw);
  return INJECTION_MARKERS.filter(([, re]) => re.test(folded)).map(([name]) => name);
}
