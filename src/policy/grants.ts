/**
 * Scoped grants, the pure half (docs/grants.md): which proposals a grant covers, and whether the policy allows a
 * grant at all (its bounds, and that it never widens code). Used by the grant workflow (the authority: it checks
 * every use), by the workflow worker's index of live grants (which only finds candidates) and by the client, the CLI
 * and the inbox before a grant is signed. Pure and deterministic.
 */
import { actionDigest } from '../contracts/capability';
import { canonicalJson } from '../contracts/canonical-json';
import { quorumFor } from './classify';
import { durationMs } from '../contracts/duration';
import { codeFieldsOf, codeToPin, type GrantDefinition, type GrantMatch } from '../contracts/grant';
import type { CompliancePolicy, GrantSettings } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import { refusal, type Refusal } from '../contracts/refusal';
import type { Tier } from '../contracts/verdict';

/** What a grant compares: the action alone (not the justification, evidence or the caller's call counter). */
export interface GrantedAction {
  agent_id: string;
  /** The runtime session the proposal came from, if any (what a session-scoped grant compares). */
  session_id?: string;
  action_type: string;
  target: Record<string, unknown>;
  parameters: Record<string, unknown>;
  /** The proposal carries taints (values from untrusted content): only a grant with `covers_tainted` covers it. */
  tainted?: boolean;
}

/** The paths a target names (`path`, `cwd`, `paths`), or null when it has a path field that is not text. */
function targetPaths(target: Record<string, unknown>): string[] | null {
  const out: string[] = [];
  for (const key of ['path', 'cwd'] as const) {
    if (!Object.hasOwn(target, key)) continue;
    const v = target[key];
    if (typeof v !== 'string') return null;
    out.push(v);
  }
  if (Object.hasOwn(target, 'paths')) {
    const v = target.paths;
    if (!Array.isArray(v) || !v.every((p) => typeof p === 'string')) return null;
    out.push(...v);
  }
  return out;
}

/**
 * True when `path` lies in the directory `prefix` (itself included), compared by segments. Only absolute paths
 * without `.`, `..` or empty segments qualify: anything else is never covered (it goes to the judge as usual). The
 * executors' own guards (file roots after resolving symlinks, cwd roots) still apply to a covered call.
 */
export function pathIsUnder(path: string, prefix: string): boolean {
  if (!path.startsWith('/') || path.includes('\0')) return false;
  const segments = path.split('/').slice(1);
  if (segments.some((s) => s === '' || s === '.' || s === '..') && path !== '/') return false;
  if (prefix === '/') return true;
  return path === prefix || path.startsWith(`${prefix}/`);
}

/** Field by field: every field the pattern names must be present and canonically equal. */
function fieldsEqual(pattern: Record<string, unknown> | undefined, actual: Record<string, unknown>): boolean {
  for (const [key, want] of Object.entries(pattern ?? {})) {
    if (!Object.hasOwn(actual, key)) return false;
    if (canonicalJson(actual[key]) !== canonicalJson(want)) return false;
  }
  return true;
}

/**
 * A runtime's tool input no rule template reads, carried verbatim (docs/hooks.md): the runtime performs it too
 * (`run_in_background`, `dangerouslyDisableSandbox`, an exec's `env`), so a pattern covers it only when it pins it.
 */
const UNMAPPED_INPUT = 'unmapped_input';

/**
 * True when a pattern that pins some of the action type's code also pins all the code the action carries (a grant
 * on a `file_edit` that keeps `parameters.content` equal does not cover the same content with a `patch` added), and
 * pins the unmapped tool input the action carries, if any.
 */
function codeAllPinned(match: Extract<GrantMatch, { kind: 'pattern' }>, action: GrantedAction): boolean {
  const pins = (f: string) => Object.hasOwn(match.parameters ?? {}, f);
  if (Object.hasOwn(action.parameters, UNMAPPED_INPUT) && !pins(UNMAPPED_INPUT)) return false;
  const fields = codeFieldsOf(action.action_type);
  return !fields.some(pins) || fields.every((f) => pins(f) || !Object.hasOwn(action.parameters, f));
}

/** True when `match` covers the action (agent and action type are compared by {@link grantCovers}). */
export function matchCovers(match: GrantMatch, action: GrantedAction): boolean {
  // The digest a capability token binds: action type, target, parameters.
  if (match.kind === 'identical') return actionDigest(action) === match.action_sha256;
  if (!fieldsEqual(match.target, action.target) || !fieldsEqual(match.parameters, action.parameters)) return false;
  if (!codeAllPinned(match, action)) return false;
  if (match.under !== undefined) {
    const paths = targetPaths(action.target);
    if (paths === null || paths.length === 0) return false;
    if (!paths.every((p) => pathIsUnder(p, match.under!))) return false;
  }
  return true;
}

/**
 * True when the grant's session scope admits the action: a grant without `session_id` covers every session (and
 * none); a session-scoped grant only a proposal of that very session, never one that carries no session.
 */
export function sessionCovers(definition: Pick<GrantDefinition, 'session_id'>, action: GrantedAction): boolean {
  return definition.session_id === undefined || definition.session_id === action.session_id;
}

/** True when the grant covers the action: the same agent, its session if scoped, the same action type, its match. */
export function grantCovers(definition: GrantDefinition, action: GrantedAction): boolean {
  return (
    definition.agent_id === action.agent_id &&
    sessionCovers(definition, action) &&
    (action.tainted !== true || definition.covers_tainted === true) &&
    definition.action_type === action.action_type &&
    matchCovers(definition.match, action)
  );
}

/** The action of a proposal, as grants compare it. */
export function grantedActionOf(proposal: Proposal): GrantedAction {
  return {
    agent_id: proposal.agent_id,
    ...(proposal.session_id !== undefined ? { session_id: proposal.session_id } : {}),
    ...((proposal.provenance?.taints.length ?? 0) > 0 ? { tainted: true } : {}),
    action_type: proposal.action_type,
    target: proposal.target,
    parameters: proposal.parameters,
  };
}

/**
 * Why this grant would widen code, or null: a pattern grant on an action type that carries code (shell_command,
 * exec, file_write, file_edit: `GRANT_CODE_FIELDS`) that does not keep its code fields equal, when
 * `spec.grants.allowUnpinnedCode` does not list the type. The one place this rule lives: the grant workflow asks it
 * at start and at every use (through {@link refuseGrantByPolicy}), the inbox and the CLI before anything is signed.
 * Why: approving `npm test` "in /srv/repo" must not approve `curl ... | sh` there; the approver saw one command.
 */
export function refuseUnpinnedCode(
  settings: Pick<GrantSettings, 'allowUnpinnedCode'>,
  definition: GrantDefinition,
): Refusal | null {
  const { match, action_type: type } = definition;
  const fields = codeToPin(settings.allowUnpinnedCode, type);
  if (match.kind === 'identical' || fields.length === 0) return null;
  const pinned = fields.filter((f) => Object.hasOwn(match.parameters ?? {}, f));
  if (pinned.length > 0) return null;
  const named = fields.map((f) => `parameters.${f}`);
  const which =
    named.length === 1 ? named[0]! : `${named.slice(0, -1).join(', ')} or ${named.at(-1)!} (whichever it carries)`;
  return refusal(
    'grant.code',
    `grant on ${type} must keep ${which} equal (a grant never widens code; spec.grants.allowUnpinnedCode ` +
      `does not list ${type})`,
  );
}

/**
 * Why the policy does not allow this grant, or null: grants turned off, a tier the policy does not let grants cover,
 * a pattern that leaves code free ({@link refuseUnpinnedCode}), a lifetime or a use count above its bounds, an expiry
 * before the creation. `tier` is the tier the policy gives the grant's action type.
 */
export function refuseGrantByPolicy(policy: CompliancePolicy, definition: GrantDefinition, tier: Tier): Refusal | null {
  const bounds = policy.spec.grants;
  if (bounds.tiers.length === 0)
    return refusal('grant.off', 'the policy allows no grants (spec.grants.tiers is empty)');
  if (!bounds.tiers.includes(tier))
    return refusal(
      'grant.tier',
      `${definition.action_type} is ${tier} in the policy, and spec.grants.tiers allows grants only for ` +
        `${bounds.tiers.join(', ')}`,
    );
  // A grant is one approver's word: it never stands in for a quorum of several.
  const quorum = quorumFor(policy, tier);
  if (quorum > 1)
    return refusal(
      'grant.quorum',
      `${tier} needs ${quorum} approvers (spec.escalation.quorum), and a grant is one approver's`,
    );
  const code = refuseUnpinnedCode(bounds, definition);
  if (code) return code;
  if (definition.max_uses > bounds.maxUses)
    return refusal(
      'grant.uses',
      `max_uses ${definition.max_uses} is above the policy's spec.grants.maxUses (${bounds.maxUses})`,
    );
  const created = Date.parse(definition.created_at);
  const expires = Date.parse(definition.expires_at);
  if (!(expires > created)) return refusal('bad-input', 'expires_at must be after created_at');
  const longest = durationMs(bounds.maxLifetime);
  if (expires - created > longest)
    return refusal(
      'grant.lifetime',
      `the grant lives ${Math.round((expires - created) / 1000)}s, longer than spec.grants.maxLifetime ` +
        `(${String(bounds.maxLifetime)})`,
    );
  return null;
}
