/**
 * Policy layering: a user's policy file says only what differs from policies/default.yaml, and is laid over it
 * before validation. The rule is the one Helm and Kubernetes' strategic merge use for maps without merge keys:
 * mappings merge key by key (at every depth), a list or a scalar in the user's file replaces the default's whole,
 * and `null` removes the default's key (its built-in default, if the schema has one, then applies). Lists replace
 * rather than append because an appended `riskMatrix` entry or allowlist rule could never take one of the
 * default's away, and a reader of the user's file could not tell the list in force from that file alone.
 *
 * Works for any section generically: nothing here names a field, so sections added to the schema layer too.
 */
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Node } from 'yaml';
import { canonicalJson } from '../contracts/canonical-json';

/** A plain mapping, as the YAML reader gives one. */
type Mapping = Record<string, unknown>;

function isMapping(v: unknown): v is Mapping {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Lays `over` on `base`: mappings merge, lists and scalars replace, `null` removes. Neither input is changed. */
export function layerOver(base: unknown, over: unknown): unknown {
  if (!isMapping(base) || !isMapping(over)) return over;
  const out: Mapping = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else out[key] = key in base ? layerOver(base[key], value) : value;
  }
  return out;
}

/** One YAML file, parsed, with the line of every field path in it (`spec.thresholds.human` -> 23). */
export interface PolicyFile {
  path: string;
  raw: unknown;
  lines: ReadonlyMap<string, number>;
}

/** Parses YAML text, keeping where each field is; throws the yaml library's error on bad YAML. */
export function parsePolicyText(path: string, text: string): PolicyFile {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const broken = doc.errors[0];
  if (broken) {
    // Where it breaks, as an editor counts (the yaml package's own position, 1-based).
    const { line, col } = lineCounter.linePos(broken.pos[0]);
    throw new Error(`line ${line}, column ${col}: ${broken.message.split('\n')[0]}`);
  }
  const lines = new Map<string, number>();
  const visit = (node: unknown, at: string[]) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair)) continue;
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const keyNode = pair.key as Node | null;
        const path = [...at, key];
        const offset = keyNode?.range?.[0];
        if (offset !== undefined) lines.set(path.join('.'), lineCounter.linePos(offset).line);
        visit(pair.value, path);
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, i) => {
        const offset = (item as Node | null)?.range?.[0];
        const path = [...at, String(i)];
        if (offset !== undefined) lines.set(path.join('.'), lineCounter.linePos(offset).line);
        visit(item, path);
      });
    }
  };
  visit(doc.contents, []);
  return { path, raw: doc.toJS() as unknown, lines };
}

let defaultFile: PolicyFile | undefined;

/** The default policy file, parsed once per process (it ships with the package and does not change). */
export function defaultPolicyFile(path: string): PolicyFile {
  if (defaultFile?.path !== path) defaultFile = parsePolicyText(path, readFileSync(path, 'utf8'));
  return defaultFile;
}

/** Where one value of the effective policy comes from. */
export type Origin =
  | { from: 'file'; path: string; line?: number }
  | { from: 'default'; path: string; line?: number }
  | { from: 'schema' };

/** True when `raw` has a non-null value at `path` (list indexes included). */
function hasPath(raw: unknown, path: readonly string[]): boolean {
  let cur: unknown = raw;
  for (const key of path) {
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isMapping(cur)) cur = cur[key];
    else return false;
    if (cur === undefined || cur === null) return false;
  }
  return true;
}

/** The value at `path` of a parsed document (undefined when absent). */
export function valueAt(raw: unknown, path: readonly string[]): unknown {
  let cur: unknown = raw;
  for (const key of path) {
    if (Array.isArray(cur)) cur = cur[Number(key)];
    else if (isMapping(cur)) cur = cur[key];
    else return undefined;
  }
  return cur;
}

/** The nearest recorded line for `path` or one of its parents. */
function lineOf(file: PolicyFile, path: readonly string[]): number | undefined {
  for (let n = path.length; n > 0; n--) {
    const line = file.lines.get(path.slice(0, n).join('.'));
    if (line !== undefined) return line;
  }
  return undefined;
}

/** A user's file laid over the default: both files, and the merged document that is validated. */
export interface PolicyLayers {
  /** The user's file; absent when the default policy is used as is. */
  user?: PolicyFile;
  default: PolicyFile;
  merged: unknown;
}

/** Lays a user's file over the default (the default alone when `user` is absent or is the default file itself). */
export function layerPolicy(defaults: PolicyFile, user?: PolicyFile): PolicyLayers {
  if (!user || user.path === defaults.path) return { default: defaults, merged: defaults.raw };
  // Anything but a mapping is not a layer: it is validated as written and refused with the schema's message.
  return { user, default: defaults, merged: isMapping(user.raw) ? layerOver(defaults.raw, user.raw) : user.raw };
}

/**
 * Where the value at `path` comes from: the user's file when it sets that path (or a list containing it: lists
 * replace whole), else the default policy when it does, else the schema's built-in default.
 */
export function originOf(layers: PolicyLayers, path: readonly string[]): Origin {
  if (layers.user && hasPath(layers.user.raw, path))
    return { from: 'file', path: layers.user.path, line: lineOf(layers.user, path) };
  if (hasPath(layers.default.raw, path) && !removedByUser(layers, path))
    return { from: 'default', path: layers.default.path, line: lineOf(layers.default, path) };
  return { from: 'schema' };
}

/** True when the user's file set `path` or one of its parents to null (removing the default's value). */
function removedByUser(layers: PolicyLayers, path: readonly string[]): boolean {
  if (!layers.user) return false;
  for (let n = 1; n <= path.length; n++) if (valueAt(layers.user.raw, path.slice(0, n)) === null) return true;
  return false;
}

/** The line in the user's file nearest to `path`, for error messages (`file:line: field: rule`). */
export function userLineOf(layers: PolicyLayers, path: readonly string[]): number | undefined {
  return layers.user ? lineOf(layers.user, path) : undefined;
}

/** One value the user's file sets: the path, the default's value there and the file's. */
export interface PolicyChange {
  path: string;
  line?: number;
  /** The default policy's value (undefined: the default has none, so the schema's built-in default applied). */
  default: unknown;
  /** The file's value (null: the file removes the default's). */
  value: unknown;
  /** The file's value equals the default's: the line could be left out. */
  same: boolean;
}

/** Every value the user's file sets, in file order, compared with the default's (mappings are walked into). */
export function changesFromDefault(layers: PolicyLayers): PolicyChange[] {
  const out: PolicyChange[] = [];
  const user = layers.user;
  if (!user) return out;
  const walk = (value: unknown, at: string[]) => {
    if (isMapping(value) && Object.keys(value).length > 0 && isMapping(valueAt(layers.default.raw, at) ?? {})) {
      for (const [k, v] of Object.entries(value)) walk(v, [...at, k]);
      return;
    }
    const base = valueAt(layers.default.raw, at);
    out.push({
      path: at.join('.'),
      line: lineOf(user, at),
      default: base,
      value,
      same: base !== undefined && canonicalJson(base) === canonicalJson(value),
    });
  };
  if (isMapping(user.raw)) walk(user.raw, []);
  return out;
}
