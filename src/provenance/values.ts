/**
 * The values a text carries that an injected instruction would make an agent copy into a call: where to send (an
 * e-mail address, an IBAN, a URL or host), what to touch (a path, a file name), what to run (a command in backticks or
 * after `$ `), which account (a long number, an identifier such as `fred9246` or `new_password`). Read on the
 * normalised text (NFKC, no invisible characters, lower case: what the injection scan reads), each with a minimum
 * length, so ordinary words never become values: prose alone taints nothing. Pure, no I/O.
 */
import { normaliseForMatching } from '../policy/normalise';

/** What kind of value; one word each, shown to the judge and the person beside the value. */
export type ValueKind =
  | 'email'
  | 'iban'
  | 'url'
  | 'host'
  | 'path'
  | 'command'
  | 'number'
  | 'identifier'
  | 'name'
  | 'quoted';

/** One value found in a text, in its normalised form (what is compared). */
export interface FoundValue {
  kind: ValueKind;
  value: string;
}

/** Characters of one text read for values; the rest of a longer text is not read (see docs/provenance.md). */
export const MAX_SCANNED_CHARS = 256 * 1024;
/** A value longer than this is cut to it (a longer one is compared by its first characters). */
export const MAX_VALUE_CHARS = 256;

const EMAIL = /[a-z0-9][a-z0-9._%+-]*@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}/gu;
// An IBAN: two letters, two check digits, 10 to 30 letters or digits, optionally in groups of four.
const IBAN = /\b[a-z]{2}[0-9]{2}(?:[a-z0-9]{10,30}|(?: [a-z0-9]{4}){2,7}(?: [a-z0-9]{1,4})?)\b/gu;
const URL_WITH_SCHEME = /\b[a-z][a-z0-9+.-]{1,15}:\/\/[^\s"'<>`()[\]{}]+/gu;
// A dotted name (a host, or a file name such as report-2024.pdf); with a path after it, a URL without a scheme.
const DOTTED = /\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*\.[a-z][a-z0-9]{1,23}\b(?:\/[^\s"'<>`()[\]{}]*)?/gu;
const PATH = /(?:~|\.{1,2})?\/[a-z0-9._-]+(?:\/[a-z0-9._-]+)+\/?|~\/[a-z0-9._-]+/gu;
const BACKTICKS = /`([^`\n]{6,256})`/gu;
const DOLLAR_LINE = /^\s*\$ (.{6,256})$/gmu;
const NUMBER = /\+?[0-9][0-9 ().-]{4,40}[0-9]/gu;
const DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}(?:[ t]\d{2}:\d{2}(?::\d{2})?)?$|^\d{1,2}[:.]\d{2}$/u;
// Letters mixed with digits or underscores: account names, handles, passwords, ids (fred9246, new_password).
const IDENTIFIER = /\b(?=[a-z0-9_]*[a-z])(?=[a-z0-9_]*[0-9_])[a-z0-9_]{6,64}\b/gu;

// A proper name of two words or more (Riverside View Hotel), read before the text is lower-cased.
const NAME = /\b\p{Lu}[\p{L}&-]+(?: (?:\p{Lu}[\p{L}&-]+|of|de|la|le|du|the|and)){0,4} \p{Lu}[\p{L}&-]+/gu;
// A quoted value ('13', "Important message!"): compared only with a whole argument, never inside one.
const QUOTED = /'([^'\n]{1,64})'|"([^"\n]{1,64})"/gu;

const MIN: Record<ValueKind, number> = {
  email: 6,
  iban: 14,
  url: 8,
  host: 6,
  path: 5,
  command: 6,
  number: 6,
  identifier: 6,
  name: 8,
  quoted: 1,
};

/** The text values are read from: normalised as the injection scan reads it, lower case, cut to MAX_SCANNED_CHARS. */
export function foldText(text: string): string {
  return normaliseForMatching(text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text).toLowerCase();
}

const trimPunctuation = (s: string) => s.replace(/[.,;:!?'"]+$/u, '');
/** A URL as compared: no scheme, no `www.`, no trailing slash or punctuation. */
const urlForm = (s: string) =>
  trimPunctuation(s)
    .replace(/^[a-z][a-z0-9+.-]*:\/\//u, '')
    .replace(/^www\./u, '')
    .replace(/\/+$/u, '');

/**
 * Every value in `text` (already folded or not: it is folded here), each once. Addresses are taken out of the text
 * before the host and identifier passes, so `fred9246@gmail.com` is one e-mail address, not also a host `gmail.com`.
 */
export function extractValues(text: string): FoundValue[] {
  const cased = normaliseForMatching(text.length > MAX_SCANNED_CHARS ? text.slice(0, MAX_SCANNED_CHARS) : text);
  let rest = cased.toLowerCase();
  const out = new Map<string, FoundValue>();
  const add = (kind: ValueKind, raw: string) => {
    const value = raw.slice(0, MAX_VALUE_CHARS);
    if (value.length >= MIN[kind]) out.set(`${kind}:${value}`, { kind, value });
  };
  for (const m of cased.matchAll(NAME)) add('name', m[0].toLowerCase());
  for (const m of cased.matchAll(QUOTED)) {
    const q = (m[1] ?? m[2]!).trim().toLowerCase();
    if (q !== '' && !DATE_OR_TIME.test(q)) add('quoted', q);
  }
  const take = (re: RegExp, each: (m: RegExpExecArray) => void) => {
    rest = rest.replace(re, (...args: unknown[]) => {
      const m = Object.assign([...(args.slice(0, -2) as string[])], { index: 0, input: '' }) as RegExpExecArray;
      each(m);
      return ' ';
    });
  };
  for (const m of rest.matchAll(BACKTICKS)) add('command', m[1]!.trim());
  for (const m of rest.matchAll(DOLLAR_LINE)) add('command', m[1]!.trim());
  take(EMAIL, (m) => add('email', m[0]));
  take(URL_WITH_SCHEME, (m) => {
    const url = urlForm(m[0]);
    add('url', url);
    const host = url.split(/[/?#:]/u)[0]!;
    if (host.includes('.')) add('host', host);
  });
  take(DOTTED, (m) => {
    const url = urlForm(m[0]);
    const host = url.split(/[/?#:]/u)[0]!;
    if (url !== host) add('url', url);
    add('host', host);
  });
  take(PATH, (m) => add('path', trimPunctuation(m[0]).replace(/\/+$/u, '')));
  take(IBAN, (m) => {
    const compact = m[0].replace(/ /gu, '');
    if (/[0-9]{6}/u.test(compact)) add('iban', compact);
  });
  for (const m of rest.matchAll(NUMBER)) {
    const raw = m[0].trim();
    if (DATE_OR_TIME.test(raw)) continue;
    add('number', raw.replace(/[^0-9]/gu, ''));
  }
  for (const m of rest.matchAll(IDENTIFIER)) add('identifier', m[0]);
  return [...out.values()];
}

/** The keys a whole argument is looked up under among quoted values and names (one word is no name). */
export const wholeArgumentKeys = (text: string): string[] => {
  const folded = foldText(text).trim();
  if (folded === '' || folded.length > 64) return [];
  return [`quoted:${folded}`, `name:${folded}`];
};

/** The key a value is stored and looked up under. */
export const valueKey = (v: FoundValue): string => `${v.kind}:${v.value}`;
