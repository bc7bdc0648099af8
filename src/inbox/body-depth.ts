/**
 * The inbox's JSON bodies are checked for depth before they are parsed. An edit value is free JSON (an MCP tool's
 * argument may be any value), so a body nesting 30,000 levels fits the 64 kB limit; parsed, it overflowed the stack
 * of the first recursive reader (zod, canonical JSON) and the inbox answered 500 (issue 38, finding 3). Now the
 * text is scanned without recursion before `JSON.parse` (`jsonTextDepthProblem`) and a body too deep is a 400 that
 * names the field, e.g. `request.edits[0].value: nested more than 64 levels deep`.
 */
import { BadInputError } from '../contracts/errors';
import { jsonTextDepthProblem, MAX_JSON_DEPTH } from '../contracts/json-depth';
import { displayText } from '../contracts/untrusted-text';

/** How many levels of the path a refusal names: enough to say which field, short enough to read. */
const NAMED_LEVELS = 4;

/** The longest key a refusal quotes. */
const NAMED_KEY_CHARS = 40;

/** A body refused before parsing: a bad-input error carrying the HTTP status body-parser answers with. */
export class BodyDepthRefusal extends BadInputError {
  readonly status = 400;
}

interface Frame {
  kind: 'object' | 'array';
  /** In an object: the last key read (raw JSON text, unquoted); in an array: the index of the current element. */
  key: string;
  index: number;
  expectKey: boolean;
}

/**
 * The field under which `text` first nests deeper than `limit`, as a path from `what` (`request.edits[0].value`),
 * or null when it does not. One pass, no recursion; string contents (and brackets in them) are skipped, keys are
 * read only as deep as the path names.
 */
export function jsonTextDepthField(text: string, what: string, limit = MAX_JSON_DEPTH): string | null {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (c === '"') {
      // A string: a key when an object expects one; its raw text is kept only for the levels a path names.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectKey && stack.length <= NAMED_LEVELS) top.key = text.slice(i + 1, j);
      i = j;
    } else if (c === '{' || c === '[') {
      if (stack.length >= limit) return pathOf(stack, what);
      stack.push({ kind: c === '{' ? 'object' : 'array', key: '', index: 0, expectKey: c === '{' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top) {
      if (top.kind === 'array') top.index++;
      else top.expectKey = true;
    } else if (c === ':' && top) {
      top.expectKey = false;
    }
  }
  return null;
}

function pathOf(stack: readonly Frame[], what: string): string {
  // The document is the first frame: each frame names where its child sits.
  const named = stack.slice(0, NAMED_LEVELS).map((f) => {
    if (f.kind === 'array') return `[${f.index}]`;
    const key = f.key.length > NAMED_KEY_CHARS ? `${f.key.slice(0, NAMED_KEY_CHARS)}…` : f.key;
    return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  });
  return `${what}${named.join('')}${stack.length > NAMED_LEVELS ? '…' : ''}`;
}

/**
 * The refusal for a JSON body nested deeper than `limit`, naming the field (through the display rule: a key is the
 * sender's text), or null. The existing linear scan decides; the path is read only for a refusal.
 */
export function jsonBodyDepthProblem(text: string, what = 'request', limit = MAX_JSON_DEPTH): string | null {
  if (jsonTextDepthProblem(text, what, limit) === null) return null;
  const field = displayText(jsonTextDepthField(text, what, limit) ?? what);
  return `${field}: nested more than ${limit} levels deep (the limit is MAX_JSON_DEPTH = ${limit})`;
}

/** `express.json`'s `verify`: a body too deep is refused (400, naming the field) before it is parsed. */
export function refuseDeepJsonBody(_req: unknown, _res: unknown, body: Buffer): void {
  const problem = jsonBodyDepthProblem(body.toString('utf8'));
  if (problem) throw new BodyDepthRefusal(problem);
}
