/**
 * Zod schemas for everything that crosses a process boundary in trust circles: signed
 * statements and the registry's Update inputs. The client, the CLI and the registry's Update
 * validators all parse with these, so a malformed payload is refused with a field-level message
 * before it can touch registry state.
 */
import { z } from 'zod';
import { AmidSchema, NonceSchema, PublicKeySchema, SignatureSchema } from '../contracts/identity';

/** Milliseconds since the Unix epoch, as signed by the agent. */
export const TimeSchema = z.number().int().nonnegative();

export const CircleIdSchema = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'expected a circle id (lowercase UUID)');

/** Organisation of a top-level agent; cross-organisation pairs need the allowlist. */
export const OrgSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'expected an organisation name such as acme');

export const RoleSchema = z.enum(['top-level', 'sub-agent']);
export type Role = z.infer<typeof RoleSchema>;

/**
 * The parent's signed word that a child belongs to its circle. The registry checks the signature
 * against the parent's *registered* key and the circle id against the parent's circle: this is
 * the answer to circle-id spoofing.
 */
export const MembershipStatementSchema = z.strictObject({
  child_amid: AmidSchema,
  child_public_key: PublicKeySchema,
  circle_id: CircleIdSchema,
  parent_amid: AmidSchema,
  time: TimeSchema,
});
export type MembershipStatement = z.infer<typeof MembershipStatementSchema>;

/** A KNOCK as the caller signs it: who, whom, when, and a nonce that makes it single-use. */
export const KnockStatementSchema = z.strictObject({
  from: AmidSchema,
  to: AmidSchema,
  time: TimeSchema,
  nonce: NonceSchema,
});
export type KnockStatement = z.infer<typeof KnockStatementSchema>;

/** A sub-agent's `request_cross_circle(target, message)`, signed by the sub-agent. */
export const BridgeRequestStatementSchema = z.strictObject({
  from: AmidSchema,
  to: AmidSchema,
  message: z.string().min(1).max(4096),
  time: TimeSchema,
  nonce: NonceSchema,
});
export type BridgeRequestStatement = z.infer<typeof BridgeRequestStatementSchema>;

/** A parent's decision on a cross-circle request, signed by that parent. */
export const BridgeDecisionStatementSchema = z.strictObject({
  request_id: z.string().regex(/^bridge-[0-9]+$/, 'expected a request id such as bridge-12'),
  by: AmidSchema,
  decision: z.enum(['forward', 'deliver', 'decline']),
  reason: z.string().max(4096).optional(),
  time: TimeSchema,
  nonce: NonceSchema,
});
export type BridgeDecisionStatement = z.infer<typeof BridgeDecisionStatementSchema>;

function signed<T extends z.ZodType>(statement: T) {
  return z.strictObject({ statement, signature: SignatureSchema });
}

export const SignedMembershipSchema = signed(MembershipStatementSchema);
export type SignedMembership = z.infer<typeof SignedMembershipSchema>;
export const SignedKnockSchema = signed(KnockStatementSchema);
export type SignedKnock = z.infer<typeof SignedKnockSchema>;
export const SignedBridgeRequestSchema = signed(BridgeRequestStatementSchema);
export type SignedBridgeRequest = z.infer<typeof SignedBridgeRequestSchema>;
export const SignedBridgeDecisionSchema = signed(BridgeDecisionStatementSchema);
export type SignedBridgeDecision = z.infer<typeof SignedBridgeDecisionSchema>;

/** An operator's signature over an admin action (see circles/operator.ts). */
export const OperatorSignatureSchema = z.strictObject({
  public_key: PublicKeySchema,
  signed_at: z.number().int().nonnegative(),
  nonce: NonceSchema,
  signature: SignatureSchema,
});

/** Operator action: a top-level agent joins the registry and gets a new circle. */
export const RegisterInputSchema = z.strictObject({
  public_key: PublicKeySchema,
  org: OrgSchema.optional(),
  operator: OperatorSignatureSchema.optional(),
});
export type RegisterInput = z.infer<typeof RegisterInputSchema>;

/** Operator action: retire an agent and its whole sub-tree. */
export const RetireInputSchema = z.strictObject({
  amid: AmidSchema,
  reason: z.string().max(1024).optional(),
  operator: OperatorSignatureSchema.optional(),
});
export type RetireInput = z.infer<typeof RetireInputSchema>;

/** Operator action on the allowlist of top-level pairs across organisations (unordered). */
export const PairInputSchema = z.strictObject({
  a: AmidSchema,
  b: AmidSchema,
  operator: OperatorSignatureSchema.optional(),
});
export type PairInput = z.infer<typeof PairInputSchema>;

/** Which circle's tree to show (all when absent). */
export const TreeFilterSchema = z.strictObject({ circle_id: CircleIdSchema.optional() });
export type TreeFilter = z.infer<typeof TreeFilterSchema>;

/** Filters for the governance event list. */
export const EventsFilterSchema = z.strictObject({
  since: TimeSchema.optional(),
  limit: z.number().int().positive().max(10_000).optional(),
});
export type EventsFilter = z.infer<typeof EventsFilterSchema>;
