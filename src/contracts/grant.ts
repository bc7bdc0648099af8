/**
 * Scoped grants (docs/grants.md): an approver's signed, durable "approve calls like this one for N minutes or N uses,
 * for this agent" (or for one runtime session of it). A grant is its own workflow (src/workflows/grant.ts) with an
 * expiry timer; a proposal it covers is approved before the judge, with `decided_by: grant:<id>`, and still gets its
 * single-use capability token.
 */
import { z } from 'zod';
import { ActionTypeSchema, AgentIdSchema, SessionIdSchema } from './proposal';
import { ApproverIdSchema } from './messages';
import { NonceSchema, SignatureSchema } from './identity-text';
import { WebAuthnAssertionSchema } from './passkey';
import { TierSchema } from './verdict';

/** A grant id: `g` then 20 base32 characters, made by the client; the workflow id is `grant-<id>`. */
export const GRANT_ID_RE = /^g[a-z2-7]{20}$/;
export const GrantIdSchema = z.string().regex(GRANT_ID_RE, 'expected a grant id such as gabcdefghijklmnopqrst');

/** The most uses one grant may have: every use is one Update in the grant's history (at most 2,000 per run). */
export const MAX_GRANT_USES = 1000;

/**
 * The parameters that carry code, per action type: the command a shell or `exec` runs, the body or the change a file
 * receives. A grant never widens code (docs/grants.md): approving `npm test` with "any command in this directory"
 * would approve `curl ... | sh` there too, so a pattern grant on one of these types must keep each of its code fields
 * equal, unless the policy lists the type in `spec.grants.allowUnpinnedCode`. An identical grant pins them anyway.
 * A file change (`file_edit`, and `program_config_edit`: a file that names programs to run later) carries one of
 * three: at least one must be pinned, and a covered call may carry none the grant does not pin.
 */
export const GRANT_CODE_FIELDS = {
  shell_command: ['command'],
  exec: ['command'],
  file_write: ['content'],
  file_edit: ['content', 'edits', 'patch'],
  program_config_edit: ['content', 'edits', 'patch'],
} as const;
export type CodeCarryingType = keyof typeof GRANT_CODE_FIELDS;

/** The action types whose parameters carry code ({@link GRANT_CODE_FIELDS}), as the policy may name them. */
export const CodeCarryingTypeSchema = z.enum(
  Object.keys(GRANT_CODE_FIELDS) as [CodeCarryingType, ...CodeCarryingType[]],
);

/** The code fields of `actionType` (empty for a type that carries none). */
export function codeFieldsOf(actionType: string): readonly string[] {
  return Object.hasOwn(GRANT_CODE_FIELDS, actionType) ? GRANT_CODE_FIELDS[actionType as CodeCarryingType] : [];
}

/**
 * The code fields a pattern grant on `actionType` must keep equal (one of them, for file_edit): the type's code
 * fields, or none when it carries none or `allowUnpinnedCode` (the policy's `spec.grants.allowUnpinnedCode`) lists it.
 */
export function codeToPin(allowUnpinnedCode: readonly string[], actionType: string): readonly string[] {
  return allowUnpinnedCode.includes(actionType) ? [] : codeFieldsOf(actionType);
}

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters (a SHA-256)');

/** A path prefix: absolute, normalised (no `.` or `..` segments, no trailing slash but for `/`). */
const PathPrefix = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (p) => p.startsWith('/') && !p.split('/').some((s) => s === '.' || s === '..') && (p === '/' || !p.endsWith('/')),
    'expected an absolute, normalised path (no . or .. segments, no trailing slash)',
  );

/**
 * Which calls a grant covers, besides its agent and action type:
 * - `identical`: the same action exactly (`action_sha256`: the digest of action type, target and parameters);
 * - `pattern`: a narrowed pattern: `target` and `parameters` name fields that must be equal (canonical JSON), and
 *   `under` a directory every path of the target (path, cwd, paths) must lie in. At least one of the three.
 */
export const GrantMatchSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('identical'), action_sha256: Sha256Hex }),
  z
    .strictObject({
      kind: z.literal('pattern'),
      target: z.record(z.string().min(1).max(64), z.unknown()).optional(),
      parameters: z.record(z.string().min(1).max(64), z.unknown()).optional(),
      under: PathPrefix.optional(),
    })
    .refine(
      (m) =>
        m.under !== undefined || Object.keys(m.target ?? {}).length > 0 || Object.keys(m.parameters ?? {}).length > 0,
      'a pattern grant needs at least one of target, parameters, under (otherwise it would cover every call)',
    ),
]);
export type GrantMatch = z.infer<typeof GrantMatchSchema>;

/** What an approver grants: signed as a whole, immutable for the grant's life. */
export const GrantDefinitionSchema = z.strictObject({
  grant_id: GrantIdSchema,
  approver: ApproverIdSchema,
  /** The one agent the grant is for. */
  agent_id: AgentIdSchema,
  /**
   * The one runtime session the grant is for, when scoped to one (a coding agent's session, the proposal's
   * `session_id`): it then covers only that agent's proposals of that session, never a proposal without a session.
   * Part of the signed definition like every other field.
   */
  session_id: SessionIdSchema.optional(),
  action_type: ActionTypeSchema,
  match: GrantMatchSchema,
  /**
   * Covers tainted calls too (a proposal carrying values from untrusted content, docs/provenance.md). Absent: a
   * tainted call is never covered, whatever the match.
   */
  covers_tainted: z.boolean().optional(),
  /** Uses allowed in all (each covered proposal is one use). */
  max_uses: z.int().min(1).max(MAX_GRANT_USES),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  reason: z.string().max(1024).optional(),
  /** The proposal the approver was deciding when they granted, if any (audit only). */
  origin_workflow_id: z.string().max(128).optional(),
});
export type GrantDefinition = z.infer<typeof GrantDefinitionSchema>;

/**
 * The grant workflow's input: the definition and the approver's signature over it (see identity/grant.ts): an
 * Ed25519 signature by the approver's key in `value`, or a WebAuthn assertion by their passkey in `webauthn` (its
 * challenge is the digest of the same statement, as for decisions; docs/inbox.md).
 */
export const GrantRequestSchema = z.strictObject({
  definition: GrantDefinitionSchema,
  signature: z
    .strictObject({
      signed_at: z.iso.datetime(),
      nonce: NonceSchema,
      value: SignatureSchema.optional(),
      webauthn: WebAuthnAssertionSchema.optional(),
    })
    .refine(
      (s) => (s.value === undefined) !== (s.webauthn === undefined),
      'a grant signature has exactly one of value (Ed25519) and webauthn (a passkey assertion)',
    )
    .optional(),
});
export type GrantRequest = z.infer<typeof GrantRequestSchema>;

/** A proposal's use of a grant, sent as the grant's `useGrant` Update by the proposal run's activity. */
export const GrantUseSchema = z.strictObject({
  workflow_id: z.string().min(1).max(128),
  agent_id: AgentIdSchema,
  /** The proposal's runtime session, when it has one (a session-scoped grant covers only its own session). */
  session_id: SessionIdSchema.optional(),
  action_type: ActionTypeSchema,
  target: z.record(z.string(), z.unknown()),
  parameters: z.record(z.string(), z.unknown()),
  /** The proposal carries taints: only a grant with `covers_tainted` covers it. */
  tainted: z.boolean().optional(),
  tier: TierSchema,
});
export type GrantUse = z.infer<typeof GrantUseSchema>;

/** Revoking a grant: who and why (audit); revocation only ever takes power away, so it needs no signature. */
export const GrantRevocationSchema = z.strictObject({
  by: z.string().min(1).max(128),
  reason: z.string().max(1024).optional(),
});
export type GrantRevocation = z.infer<typeof GrantRevocationSchema>;

export type GrantState = 'live' | 'expired' | 'used_up' | 'revoked' | 'refused';

/** What the grant's status Query (and `agent-judge grants show`) says. */
export interface GrantStatus {
  definition: GrantDefinition;
  state: GrantState;
  /** Why the grant was refused at start (bad signature, outside the policy's bounds), when it was. */
  refusal: string | null;
  uses: Array<{ workflow_id: string; at: string }>;
  revoked: (GrantRevocation & { at: string }) | null;
}

/** The `useGrant` Update's answer: the grant that approved the proposal, and its count after this use. */
export interface GrantUsed {
  grant_id: string;
  approver: string;
  uses: number;
  max_uses: number;
  expires_at: string;
}
