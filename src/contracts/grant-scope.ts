/**
 * What a grant covers, in plain words (docs/grants.md): one sentence an approver reads before their key or passkey
 * signs the grant, in the web inbox's grant form and from `agent-judge decide --grant-for` / `grants create`. Why one
 * function: a grant's reach is decided by its definition alone (src/policy/grants.ts), and an approver who signs
 * "grant calls like this one" must see what "like" means, the same words wherever the grant is made. Pure.
 */
import { actionDigest } from './capability';
import { canonicalJson } from './canonical-json';
import { codeFieldsOf, type GrantDefinition } from './grant';
import { jsonForDisplay } from './untrusted-text';

/** The action a grant is made from, as grants compare it (src/policy/grants.ts `GrantedAction`). */
export interface ScopedAction {
  session_id?: string;
  action_type: string;
  target: Record<string, unknown>;
  parameters: Record<string, unknown>;
}

/** The longest value shown whole; a longer one is cut, with its full length said. */
const SHOWN_CHARS = 120;

/** How each code field is named in words (a field not listed is named by its path). */
const CODE_WORDS: Record<string, string> = { command: 'the command', content: 'the content', patch: 'the patch' };

/**
 * A value as agent-controlled text, quoted so it cannot pass for our words: JSON (line breaks and control
 * characters escaped), with invisible, format and direction-changing characters and agent-judge's marks as `\u`
 * escapes too (the one display rule, contracts/untrusted-text.ts), cut past {@link SHOWN_CHARS}.
 */
function quoted(value: unknown): string {
  const json = typeof value === 'string' ? JSON.stringify(value) : canonicalJson(value);
  const safe = jsonForDisplay(json);
  if (safe.length <= SHOWN_CHARS) return safe;
  const what = typeof value === 'string' ? `${value.length} characters` : `${json.length} characters of JSON`;
  return `${safe.slice(0, SHOWN_CHARS - 20)}… (${what} in all)`;
}

/** A path as is when it is plain (letters, digits, `/ . _ - @ + : , =`), quoted otherwise. */
function pathText(path: unknown): string {
  return typeof path === 'string' && /^[\w./@+:,=-]{1,512}$/.test(path) ? path : quoted(path);
}

/** One pinned target field in words: the directory, the file, the files, or `target.<name> <value>`. */
function targetWords(name: string, value: unknown): string {
  if (name === 'cwd') return `in ${pathText(value)} (that directory only)`;
  if (name === 'path') return `on the file ${pathText(value)} only`;
  if (name === 'paths' && Array.isArray(value)) return `on the files ${value.map(pathText).join(', ')} only`;
  return `target.${name} ${quoted(value)} exactly`;
}

/** One pinned parameter in words: a code field by its name (`the command "npm test" exactly`), any other by path. */
function parameterWords(actionType: string, name: string, value: unknown): string {
  if (codeFieldsOf(actionType).includes(name)) return `${CODE_WORDS[name] ?? `the ${name}`} ${quoted(value)} exactly`;
  return `parameters.${name} ${quoted(value)} exactly`;
}

/**
 * Parameters made from another one, left out of an identical grant's words: a shell command's `parsed` is what the
 * hook's parser made of `parameters.command`, already shown.
 */
const DERIVED: Record<string, readonly string[]> = { shell_command: ['parsed'] };

/** Code fields first (what runs), then the target (where), then the other parameters. */
function pinnedWords(
  actionType: string,
  target: Record<string, unknown>,
  parameters: Record<string, unknown>,
  { skipDerived = false } = {},
): string[] {
  const code = codeFieldsOf(actionType);
  const derived = skipDerived ? (DERIVED[actionType] ?? []) : [];
  const params = Object.entries(parameters).filter(([k]) => !derived.includes(k));
  return [
    ...params.filter(([k]) => code.includes(k)).map(([k, v]) => parameterWords(actionType, k, v)),
    ...Object.entries(target).map(([k, v]) => targetWords(k, v)),
    ...params.filter(([k]) => !code.includes(k)).map(([k, v]) => parameterWords(actionType, k, v)),
  ];
}

/** Every field of the action an identical grant is made from, but those made from another. */
function identicalWords(actionType: string, action: ScopedAction): string {
  return pinnedWords(actionType, action.target, action.parameters, { skipDerived: true }).join(', ');
}

/** The code fields a pattern leaves free, as a warning in capitals: a grant that does so approves any code. */
function unpinnedCodeWords(definition: GrantDefinition): string | null {
  if (definition.match.kind !== 'pattern') return null;
  const fields = codeFieldsOf(definition.action_type);
  const pinned = definition.match.parameters ?? {};
  if (fields.length === 0 || fields.some((f) => Object.hasOwn(pinned, f))) return null;
  const names = fields.map((f) => CODE_WORDS[f]?.replace(/^the /, '') ?? f).join(', ');
  return `ANY ${names} (not pinned: spec.grants.allowUnpinnedCode lets this grant approve any code)`;
}

/** A lifetime in its two largest whole units: `30 minutes`, `1 hour 30 minutes`, `1 day 2 hours`, `45 seconds`. */
export function lifetimeWords(ms: number): string {
  const units: Array<[number, string]> = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  for (const [size, name] of units) {
    const n = Math.floor(rest / size);
    if (n === 0) continue;
    parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    rest -= n * size;
    if (parts.length === 2) break;
  }
  return parts.length > 0 ? parts.join(' ') : 'less than a second';
}

/**
 * What a grant covers, in one sentence: the action type and agent, what must stay the same (the command or body
 * exactly, the directory, the files), what may differ, the session, the lifetime and the uses. E.g.
 * `shell_command by @engineering: the command "npm test" exactly, in /srv/repo (that directory only); other fields
 * may differ; only in session s-1 (this session); for 30 minutes (until 2026-12-03T10:30:00.000Z); at most 5 uses`.
 *
 * `action`, the proposal the grant is made from, lets an identical grant say what it is identical to (its digest
 * alone says nothing to a person); it is used only when its digest is the grant's. Agent-controlled values (a command,
 * a path) are quoted as JSON, so they cannot pass for these words.
 */
export function describeGrantScope(definition: GrantDefinition, action?: ScopedAction): string {
  const { match, action_type: type } = definition;
  let what: string;
  if (match.kind === 'identical') {
    what =
      action && action.action_type === type && actionDigest(action) === match.action_sha256
        ? `only the identical action: ${identicalWords(type, action)}`
        : `only the identical action (sha256 ${match.action_sha256.slice(0, 12)}…)`;
  } else {
    const words = pinnedWords(type, match.target ?? {}, match.parameters ?? {});
    const free = unpinnedCodeWords(definition);
    if (free) words.unshift(free);
    if (match.under !== undefined) words.push(`every path anywhere under ${pathText(match.under)}`);
    what = `${words.join(', ')}; other fields may differ`;
  }
  const session =
    definition.session_id === undefined
      ? 'in any session'
      : `only in session ${definition.session_id}` +
        (action?.session_id === definition.session_id ? ' (this session)' : '');
  const lifetime = Date.parse(definition.expires_at) - Date.parse(definition.created_at);
  const uses = `at most ${definition.max_uses} use${definition.max_uses === 1 ? '' : 's'}`;
  return (
    `${type} by ${definition.agent_id}: ${what}; ${session}; ` +
    `for ${lifetimeWords(lifetime)} (until ${definition.expires_at}); ${uses}`
  );
}
