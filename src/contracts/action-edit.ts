/**
 * Approve with edits (docs/edits.md): an approver may narrow the action before approving it. An edit names one field
 * (`scope_claim.max_lines`, `parameters.body`, `parameters.arguments.<name>`...) and its new value; the table
 * {@link EDITABLE_PARAMETERS} says, per action type, which fields may change and by which rule. Only narrowing edits
 * pass: a lower number, a subset of a list, a shorter text, a value replaced by one that passes the action type's
 * own schema. Anything else is refused, naming the field and the rule. The edited action is then a proposal of its
 * own content digest: the decision signs that digest, the capability token binds it, the executor or the caller
 * performs exactly it.
 *
 * Pure and deterministic: the proposal workflow applies the same edits the CLI signed (in its Update validator) and
 * gets the same digest.
 */
import { canonicalJson } from './canonical-json';
import { BadInputError } from './errors';
import { refused, type Checked } from './refusal';
import { proposalContentDigest } from './digest';
import { isKnownActionType, MAX_PROPOSAL_BYTES, safeParseProposal, type KnownActionType } from './proposal';
import type { Proposal } from './proposal';
import { withinScope } from './repo-path';

/** One requested edit: a field of the action and its new value (JSON). */
export interface ActionEdit {
  path: string;
  value: unknown;
}

/** One change the edits made, as the agent and the history are told: the field, its value before and after. */
export interface ActionChange {
  path: string;
  /** The value before (null when the field was absent). */
  from: unknown;
  to: unknown;
}

/** What an edited approval changed (in the verdict and the outcome): both digests and every change. */
export interface ActionEdited {
  /** Content digest of the proposal as submitted (what the approver was shown). */
  from_digest: string;
  /** Content digest of the edited action: what the decision signs and the token binds. */
  to_digest: string;
  changes: ActionChange[];
}

/** The edited action as the run holds it (the status): the digests and changes, the action itself, and who edited. */
export interface EditedRecord extends ActionEdited {
  /** The approver whose decision carried the edits. */
  by: string;
  /** The edited proposal: what is performed. */
  proposal: Proposal;
}

/**
 * How a field may change.
 * - `lower`: a number no greater than the current one (which must be set).
 * - `lower_or_set`: a number no greater than the current one, or any when none is set (a new limit narrows).
 * - `shorter`: a text no longer than the current one (which must be set), and not empty.
 * - `within`: paths each inside the current list (`withinScope`), or any list when none is set.
 * - `subset`: items each in the current list, or any list when none is set.
 * - `only_true`: may be set to true (a restriction switched on), never dropped.
 * - `replace`: any value the action type's schema accepts.
 * - `same_type`: an existing entry (never a new one) replaced by a value of the same JSON type.
 */
export type EditRule =
  | 'lower'
  | 'lower_or_set'
  | 'shorter'
  | 'within'
  | 'subset'
  | 'only_true'
  | 'replace'
  | 'same_type';

/** The scope claim's fields, editable for every known action type agent-judge performs. */
const SCOPE_FIELDS: Record<string, EditRule> = {
  'scope_claim.max_lines': 'lower_or_set',
  'scope_claim.files_only': 'within',
  'scope_claim.no_existing_code_deletion': 'only_true',
};

/** The wildcard key: any one entry of `parameters.arguments` (an MCP tool call's arguments). */
export const ARGUMENT_FIELD = 'parameters.arguments.*';

interface Editable {
  /** Field path -> rule. */
  fields: Record<string, EditRule>;
  /** Why the action's body is not editable, said when an edit names it. */
  notEditable?: Record<string, string>;
}

const CODE_WHY =
  'is code: a changed command is another program, not a narrower one (a shorter line can do more), and no judge ' +
  'has seen it; reject the proposal and let the agent propose the narrower command';
const BODY_WHY =
  'is the change itself: an edited file body is new content no judge has seen, not a narrower change; reject the ' +
  'proposal and let the agent propose the smaller change';

const FILE_EDIT_EDITABLE: Editable = {
  fields: {},
  notEditable: { 'parameters.content': BODY_WHY, 'parameters.edits': BODY_WHY, 'parameters.patch': BODY_WHY },
};

/** Per action type: which fields an approver may edit, and by which rule (docs/edits.md has the table). */
export const EDITABLE_PARAMETERS: Record<KnownActionType, Editable> = {
  memory_write: { fields: { ...SCOPE_FIELDS, 'parameters.content': 'shorter' } },
  vault_note_create: { fields: { ...SCOPE_FIELDS, 'parameters.title': 'replace', 'parameters.content': 'shorter' } },
  issue_comment: { fields: { ...SCOPE_FIELDS, 'parameters.body': 'shorter' } },
  discord_message: { fields: { ...SCOPE_FIELDS, 'parameters.content': 'shorter' } },
  forgejo_pr_create: {
    fields: { ...SCOPE_FIELDS, 'parameters.title': 'replace', 'parameters.body': 'shorter' },
    notEditable: {
      'parameters.files_changed': 'lists what the branch holds: the branch decides it, not an edit',
      'parameters.estimated_diff_lines': "is the agent's estimate of the branch: narrow scope_claim.max_lines instead",
    },
  },
  file_write: { fields: { ...SCOPE_FIELDS }, notEditable: { 'parameters.content': BODY_WHY } },
  exec: {
    fields: { ...SCOPE_FIELDS, 'parameters.timeout_ms': 'lower' },
    notEditable: { 'parameters.command': CODE_WHY },
  },
  web_publish: { fields: { ...SCOPE_FIELDS, 'parameters.body': 'shorter' } },
  financial_op: { fields: { ...SCOPE_FIELDS, 'parameters.amount': 'lower', 'parameters.memo': 'shorter' } },
  impersonation: { fields: { ...SCOPE_FIELDS, 'parameters.purpose': 'shorter' } },
  credential_rotation: { fields: { ...SCOPE_FIELDS, 'parameters.reason': 'shorter' } },
  shell_command: { fields: {}, notEditable: { 'parameters.command': CODE_WHY, 'parameters.parsed': CODE_WHY } },
  file_edit: FILE_EDIT_EDITABLE,
  program_config_edit: FILE_EDIT_EDITABLE,
  web_request: { fields: { 'parameters.prompt': 'shorter', 'parameters.domains': 'subset' } },
  web_request_sensitive: { fields: { 'parameters.prompt': 'shorter', 'parameters.domains': 'subset' } },
  mcp_tool_call: { fields: { [ARGUMENT_FIELD]: 'same_type' } },
  tool_call: { fields: { [ARGUMENT_FIELD]: 'same_type' } },
};

/** The most edits one decision carries. */
export const MAX_EDITS = 50;

/** Edits applied: the edited proposal, its digest and the changes. */
export interface AppliedEdits {
  proposal: Proposal;
  edited: ActionEdited;
}

export type EditResult = Checked<AppliedEdits>;

const RULE_WORDS: Record<EditRule, string> = {
  lower: 'may only be lowered',
  lower_or_set: 'may only be lowered (or set when unset)',
  shorter: 'may only be shortened',
  within: 'may only narrow to paths inside the current list',
  subset: 'may only narrow to a subset of the current list',
  only_true: 'may only be set to true',
  replace: "may be replaced by a value the action type's schema accepts",
  same_type: 'may be replaced by a value of the same JSON type (never added or removed)',
};

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function show(v: unknown): string {
  const text = JSON.stringify(v) ?? 'nothing';
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Why `to` breaks `rule` against `from` (the current value, undefined when absent), or null. */
function ruleProblem(rule: EditRule, from: unknown, to: unknown): string | null {
  switch (rule) {
    case 'lower':
    case 'lower_or_set':
      if (typeof to !== 'number' || !Number.isFinite(to)) return 'expected a number';
      if (from === undefined)
        return rule === 'lower' ? 'is not set in the proposal, so there is nothing to lower' : null;
      if (typeof from === 'number' && to > from) return `${to} is more than ${from}`;
      return null;
    case 'shorter':
      if (typeof to !== 'string') return 'expected a text';
      if (typeof from !== 'string') return 'is not set in the proposal, so there is nothing to shorten';
      if (to.length === 0) return 'may not be emptied';
      if (to.length > from.length) return `${to.length} characters is longer than the ${from.length} proposed`;
      if (to === from) return 'is unchanged';
      return null;
    case 'within': {
      if (!Array.isArray(to) || !to.every((x) => typeof x === 'string')) return 'expected a list of paths';
      if (from === undefined) return null;
      const wider = to.filter((f) => !withinScope(f, from as string[]));
      return wider.length > 0 ? `not inside the current list (${show(from)}): ${show(wider)}` : null;
    }
    case 'subset': {
      if (!Array.isArray(to)) return 'expected a list';
      if (from === undefined) return null;
      const current = new Set((from as unknown[]).map((x) => canonicalJson(x)));
      const extra = to.filter((x) => !current.has(canonicalJson(x)));
      return extra.length > 0 ? `not in the current list (${show(from)}): ${show(extra)}` : null;
    }
    case 'only_true':
      return to === true ? null : 'expected true';
    case 'replace':
      return null;
    case 'same_type':
      if (from === undefined) return 'is not an argument of the call: arguments are replaced, never added';
      if (jsonType(from) !== jsonType(to)) return `expected a ${jsonType(from)}, got a ${jsonType(to)}`;
      return null;
  }
}

/** The rule of `path` for this action type (`parameters.arguments.<name>` matches the wildcard), or undefined. */
function ruleFor(editable: Editable, path: string): EditRule | undefined {
  if (Object.hasOwn(editable.fields, path)) return editable.fields[path];
  if (path.startsWith('parameters.arguments.') && path.length > 'parameters.arguments.'.length)
    return editable.fields[ARGUMENT_FIELD];
  return undefined;
}

/** The field's parent object and key, for `scope_claim.x`, `parameters.x` and `parameters.arguments.<name>`. */
function locate(p: Proposal, path: string): { parent: Record<string, unknown>; key: string } {
  if (path.startsWith('parameters.arguments.')) {
    const args = (p.parameters.arguments ?? {}) as Record<string, unknown>;
    return { parent: args, key: path.slice('parameters.arguments.'.length) };
  }
  const [head, ...rest] = path.split('.');
  const parent = (head === 'scope_claim' ? p.scope_claim : p.parameters) as Record<string, unknown>;
  return { parent, key: rest.join('.') };
}

function clone<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** The fields an approver may edit on this proposal, for messages and `decide --help`. */
export function editableFields(p: Proposal): string[] {
  if (!isKnownActionType(p.action_type)) return [];
  const fields = Object.keys(EDITABLE_PARAMETERS[p.action_type].fields);
  return p.performer ? fields.filter((f) => f === ARGUMENT_FIELD) : fields;
}

/**
 * Applies `edits` to `proposal`: the edited proposal with its digest and the changes, or why not (naming the field
 * and the rule). Never throws. The edited proposal is checked against the action type's schema again.
 */
export function applyActionEdits(proposal: Proposal, edits: readonly ActionEdit[]): EditResult {
  const fail = (why: string): EditResult => refused('edit.invalid', `edit ${why}`);
  if (edits.length === 0) return fail('list: expected at least one edit');
  if (edits.length > MAX_EDITS) return fail(`list: at most ${MAX_EDITS} edits`);
  if (!isKnownActionType(proposal.action_type))
    return fail(
      `${edits[0]!.path}: ${proposal.action_type} is not an action type agent-judge knows; nothing is editable`,
    );
  const editable = EDITABLE_PARAMETERS[proposal.action_type];
  const edited = clone(proposal);
  const changes: ActionChange[] = [];
  const seen = new Set<string>();
  for (const e of edits) {
    const path = e.path;
    if (seen.has(path)) return fail(`${path}: edited twice`);
    seen.add(path);
    const why = editable.notEditable?.[path];
    if (why) return fail(`${path}: not editable: ${proposal.action_type}'s ${path.split('.').pop()} ${why}`);
    const rule = ruleFor(editable, path);
    if (!rule) {
      const allowed = editableFields(proposal);
      const list = allowed.length > 0 ? allowed.join(', ') : 'none';
      return fail(`${path}: not editable for ${proposal.action_type} (editable: ${list})`);
    }
    // A caller performs the action from its own call: it can take back only new arguments of the call it holds.
    if (proposal.performer && path.startsWith('parameters.arguments.') === false) {
      return fail(
        `${path}: not editable: the caller performs this action from its own call, and can take back only an ` +
          "mcp_tool_call's arguments",
      );
    }
    if (e.value === undefined) return fail(`${path}: expected a value`);
    const { parent, key } = locate(edited, path);
    const from = Object.hasOwn(parent, key) ? parent[key] : undefined;
    const problem = ruleProblem(rule, from, e.value);
    if (problem) return fail(`${path}: ${RULE_WORDS[rule]}: ${problem}`);
    parent[key] = clone(e.value);
    changes.push({ path, from: from === undefined ? null : from, to: e.value });
  }
  const size = new TextEncoder().encode(canonicalJson(edited)).length;
  if (size > MAX_PROPOSAL_BYTES) return fail(`list: the edited proposal is over the ${MAX_PROPOSAL_BYTES}-byte limit`);
  const parsed = safeParseProposal(edited);
  if (!parsed.ok) return fail(`result: the edited action is not valid: ${parsed.refusal.reason}`);
  const from_digest = proposalContentDigest(proposal);
  const to_digest = proposalContentDigest(parsed.value);
  if (from_digest === to_digest) return fail('list: the edits change nothing');
  return { ok: true, value: { proposal: parsed.value, edited: { from_digest, to_digest, changes } } };
}

/** The changes in one line for a person or an agent: `path: before -> after; ...`, each value cut to 60 characters. */
export function describeChanges(changes: readonly ActionChange[]): string {
  return changes.map((c) => `${c.path}: ${show(c.from)} -> ${show(c.to)}`).join('; ');
}

/**
 * One `--edit path=value`: the value is JSON when it parses as JSON, otherwise the text as given (so
 * `parameters.body=Thanks` needs no quotes, and `scope_claim.max_lines=40` is a number).
 */
export function parseEditFlag(flag: string): ActionEdit {
  const at = flag.indexOf('=');
  if (at <= 0)
    throw new BadInputError(`--edit ${JSON.stringify(flag)}: expected path=value, e.g. scope_claim.max_lines=40`);
  const path = flag.slice(0, at).trim();
  const raw = flag.slice(at + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    /* a plain text */
  }
  return { path, value };
}
