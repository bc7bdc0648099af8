import { z } from 'zod';
import { NonceSchema, SignatureSchema } from './identity-text';
import { EvidenceSchema, ScopeClaimSchema } from './proposal';
import { WebAuthnAssertionSchema } from './passkey';

/**
 * The actor's answer to a CLARIFY: more evidence, a narrower scope, or a better justification.
 * Anything else about the proposal stays as it was judged. (The MCP proxy's `_agent_judge` argument is these
 * fields too, each optional.)
 */
export const ClarificationFieldsSchema = z.strictObject({
  justification: z
    .string()
    .min(1)
    .max(16 * 1024)
    .optional(),
  cited_evidence: z.array(EvidenceSchema).max(50).optional(),
  scope_claim: ScopeClaimSchema.optional(),
});

/** A clarification: the actor-written fields, at least one of them. */
export const ClarificationSchema = ClarificationFieldsSchema.refine(
  (c) => c.justification !== undefined || (c.cited_evidence?.length ?? 0) > 0 || c.scope_claim !== undefined,
  'a clarification needs at least one of justification, cited_evidence, scope_claim',
);
export type Clarification = z.infer<typeof ClarificationSchema>;

export const ApproverIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9@][A-Za-z0-9@._:-]{0,127}$/, 'expected an approver id such as scott or discord:1234');

/** What a v2 decision signature was made for: the proposal's content digest and its workflow run. */
export const DecisionBindsSchema = z.strictObject({
  content_sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters (the content digest)'),
  run_id: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, 'expected a Temporal run id'),
  /** Set only for an approval with edits: the content digest of the edited action (docs/edits.md). */
  edited_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters (the edited action digest)')
    .optional(),
});
export type DecisionBinds = z.infer<typeof DecisionBindsSchema>;

/** One edit of an approval with edits: a field of the action and its new value (src/contracts/action-edit.ts). */
export const ActionEditSchema = z.strictObject({
  path: z
    .string()
    .min(1)
    .max(300)
    .regex(/^(scope_claim|parameters)\.\P{Cc}+$/u, 'expected scope_claim.<field> or parameters.<field>'),
  value: z.json(),
});

/** A person's decision on an escalated proposal, sent as the `humanDecision` Update. */
export const HumanDecisionSchema = z
  .strictObject({
    decision: z.enum(['approve', 'reject']),
    approver: ApproverIdSchema,
    reason: z.string().max(4096).optional(),
    via: z.enum(['cli', 'discord', 'slack', 'api', 'inbox']).default('api'),
    /**
     * Approve with edits (docs/edits.md): the approver narrows the action before approving it. Only with `approve`;
     * the edited action is what is performed, and a signature binds its digest (`binds.edited_sha256`).
     */
    edits: z.array(ActionEditSchema).min(1).max(50).optional(),
    /**
     * Ed25519 signature by the approver's key (or the Discord bot's, or the Slack app's) in `value`, or a WebAuthn
     * assertion by the approver's passkey in `webauthn` (its challenge is the digest of the same statement;
     * docs/inbox.md). `binds` names the content and the run it was made for (statement v2, see
     * identity/decision.ts); a signature without it is a v1 signature, bound to the workflow id alone, and new runs
     * refuse it.
     */
    signature: z
      .strictObject({
        signed_at: z.iso.datetime(),
        nonce: NonceSchema,
        value: SignatureSchema.optional(),
        webauthn: WebAuthnAssertionSchema.optional(),
        binds: DecisionBindsSchema.optional(),
      })
      .refine(
        (s) => (s.value === undefined) !== (s.webauthn === undefined),
        'a decision signature has exactly one of value (Ed25519) and webauthn (a passkey assertion)',
      )
      .optional(),
  })
  .refine((d) => d.edits === undefined || d.decision === 'approve', {
    message: 'edits: only an approval carries edits',
    path: ['edits'],
  });
export type HumanDecision = z.infer<typeof HumanDecisionSchema>;
