/**
 * The text that rules read. An agent controls every byte of a proposal, so one zero-width space inside an AWS key, or
 * a full-width letter in `ｒｍ`, must not carry it past a deny pattern or the injection scan: both read the text after
 * NFKC folding (full-width and compatibility forms to their plain letters) with every default-ignorable code point
 * (zero-width characters, joiners, bidi controls, variation selectors, tags) removed. The action itself keeps its
 * raw bytes; only the matching sees the normalised form. Pure and deterministic, so workflow code may call it.
 */

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/** NFKC, then without default-ignorable code points: what deny patterns, topic rules and the injection scan match. */
export function normaliseForMatching(text: string): string {
  // Removing first and folding after, then once more: NFKC can produce an ignorable (or join what one split).
  return text.replace(IGNORABLE, '').normalize('NFKC').replace(IGNORABLE, '');
}
