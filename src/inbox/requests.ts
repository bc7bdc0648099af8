/**
 * What the inbox's pages may POST, as zod schemas: every field from the browser is checked here before anything is
 * read from it, and a refusal names the field and the rule. Strict objects: an unknown field is refused, not ignored.
 */
import { z } from 'zod';
import { MAX_EDITS } from '../contracts/action-edit';
import { MAX_GRANT_USES } from '../contracts/grant';
import { ActionEditSchema } from '../contracts/messages';
import { WebAuthnAssertionSchema } from '../contracts/passkey';
import { refused, type Checked } from '../contracts/refusal';
import { describeIssues } from '../contracts/zod-error';

/** The CSRF token may come in the body of a form post; it is checked before the body is parsed. */
const Csrf = z.string().max(128).optional();

/** A challenge the inbox issued: base64url of a SHA-256 (43 characters), or of 32 random bytes. */
const Challenge = z
  .string({ error: 'expected the challenge the inbox issued' })
  .regex(/^[A-Za-z0-9_-]{16,128}$/, 'expected the challenge the inbox issued');

/** The most minutes a grant may be asked for here (30 days); the policy's spec.grants.maxLifetime is the real bound. */
export const MAX_GRANT_MINUTES = 30 * 24 * 60;

/** "Approve and grant": calls like this one for `minutes` and `uses`; the identical action unless `same`/`under`. */
export const GrantChoiceSchema = z.strictObject({
  minutes: z.int('expected a whole number of minutes').min(1).max(MAX_GRANT_MINUTES),
  uses: z.int('expected a whole number of uses').min(1).max(MAX_GRANT_USES),
  /** A narrowed pattern: fields of the proposal that must stay equal. */
  same: z
    .array(
      z.string().regex(/^(target|parameters)\.[A-Za-z0-9_-]{1,64}$/, 'expected target.<field> or parameters.<field>'),
    )
    .max(20)
    .optional(),
  /** A narrowed pattern: a directory every path of the target must lie in. */
  under: z.string().min(1).max(4096).optional(),
  /** Only calls of the proposal's own session (its `session_id`, docs/grants.md). */
  this_session: z.boolean().optional(),
});
export type GrantChoice = z.infer<typeof GrantChoiceSchema>;

/** Asking for the challenge of a decision: approve or reject, a reason, and with an approval edits or a grant. */
export const DecisionRequestSchema = z
  .strictObject({
    decision: z.enum(['approve', 'reject'], { error: 'expected approve or reject' }),
    reason: z.string('expected text').max(4096, 'expected text of at most 4096 characters').optional(),
    edits: z.array(ActionEditSchema).min(1).max(MAX_EDITS).optional(),
    grant: GrantChoiceSchema.optional(),
    _csrf: Csrf,
  })
  .refine((r) => r.edits === undefined || r.decision === 'approve', {
    message: 'only an approval carries edits',
    path: ['edits'],
  })
  .refine((r) => r.grant === undefined || r.decision === 'approve', {
    message: 'only an approval can grant',
    path: ['grant'],
  })
  .refine((r) => r.grant === undefined || r.edits === undefined, {
    message: 'a grant covers calls like the proposal, not an edited one; approve with edits or grant, not both',
    path: ['grant'],
  });
export type DecisionRequest = z.infer<typeof DecisionRequestSchema>;

/** Sending the signed decision: the challenge, the passkey's assertion over it, and the grant's when granting. */
export const DecideRequestSchema = z.strictObject({
  challenge: Challenge,
  assertion: WebAuthnAssertionSchema,
  grant_assertion: WebAuthnAssertionSchema.optional(),
  _csrf: Csrf,
});
export type DecideRequest = z.infer<typeof DecideRequestSchema>;

/** Revoking one of the approver's grants: why (audit trail). */
export const RevokeRequestSchema = z.strictObject({
  reason: z.string('expected text').max(1024, 'expected text of at most 1024 characters').optional(),
  _csrf: Csrf,
});

/** `body` parsed by `schema`, or refused with the message naming each field and the rule it broke. */
export function readRequest<T>(schema: z.ZodType<T>, body: unknown): Checked<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return { ok: true, value: parsed.data };
  return refused('bad-input', describeIssues('', parsed.error.issues));
}
