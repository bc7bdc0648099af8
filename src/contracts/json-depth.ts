/**
 * A bound on how deeply JSON may nest, checked without recursion. Every recursive step that sees a
 * proposal (`JSON.parse`, `JSON.stringify`, zod, canonical JSON, the payload converter) would
 * otherwise overflow the stack on hostile input (a target nested 5,000 levels, raw text 100,000
 * deep) and end in "Maximum call stack size exceeded" instead of a bad-input error.
 */

/**
 * Deepest nesting of objects and arrays accepted anywhere a proposal or a message enters: the
 * document itself is level 1, so `{"target":{"a":{}}}` is 3 levels deep. No contract needs more
 * than a handful; 64 leaves room for free-form parameters of unknown action types.
 */
export const MAX_JSON_DEPTH = 64;

/** More objects and arrays than any accepted document can hold (each costs at least 2 bytes of JSON). */
const MAX_JSON_CONTAINERS = 1_000_000;

/** The one-line refusal, shared by the text scan and the value walk so both read the same. */
function tooDeep(where: string, limit: number): string {
  return `${where}: nested more than ${limit} levels deep (the limit is MAX_JSON_DEPTH = ${limit})`;
}

/**
 * Scans raw JSON text for its deepest bracket nesting before `JSON.parse` sees it; brackets inside
 * strings do not count. Returns a one-line problem naming the limit, or null. Linear, no recursion.
 */
export function jsonTextDepthProblem(text: string, what: string, limit = MAX_JSON_DEPTH): string | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return `${tooDeep(what, limit)} at character ${i + 1}`;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return null;
}

/**
 * Walks a parsed value (or one a library caller built) depth first with an explicit stack, and
 * names the top-level field under which it nests deeper than `limit` or holds a `__proto__` key.
 * A cyclic value counts as infinitely deep, so it is refused here too instead of overflowing later;
 * a value that reuses one object many times (only a library caller can build one) stops after
 * {@link MAX_JSON_CONTAINERS}.
 * Returns null when fine.
 */
export function jsonDepthProblem(value: unknown, what: string, limit = MAX_JSON_DEPTH): string | null {
  if (value === null || typeof value !== 'object') return null;
  const stack: { node: object; depth: number; field: string }[] = [{ node: value, depth: 1, field: what }];
  let seen = 0;
  while (stack.length > 0) {
    const { node, depth, field } = stack.pop()!;
    if (++seen > MAX_JSON_CONTAINERS) return `${what}: more than ${MAX_JSON_CONTAINERS} nested objects and arrays`;
    if (depth > limit) return tooDeep(field, limit);
    // JSON.parse makes `__proto__` an own key; zod's strict objects pass it over silently, and any
    // code that copies the object could turn it into a prototype. No contract uses it: refuse it.
    if (!Array.isArray(node) && Object.prototype.hasOwnProperty.call(node, '__proto__')) {
      return `${depth === 1 ? what : field}: the key __proto__ is not allowed`;
    }
    const children = Array.isArray(node) ? node : Object.values(node);
    const keys = Array.isArray(node) ? undefined : Object.keys(node);
    children.forEach((child: unknown, i) => {
      if (child === null || typeof child !== 'object') return;
      // Name the field one level below the document (proposal.target), as schema errors do.
      const at = depth === 1 ? `${what}${keys ? `.${keys[i]}` : `[${i}]`}` : field;
      stack.push({ node: child, depth: depth + 1, field: at });
    });
  }
  return null;
}
