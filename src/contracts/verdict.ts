import { z } from 'zod';
import { EVIDENCE_STATUSES } from './lifecycle';

export const TIERS = ['no-judge', 'lightweight-approval', 'full-judge-review', 'human-only'] as const;
/** Autonomy tier of seed 000 §2: how much scrutiny an action gets before it runs. */
export const TierSchema = z.enum(TIERS);
export type Tier = z.infer<typeof TierSchema>;

export const VerdictKindSchema = z.enum(['APPROVE', 'REJECT', 'CLARIFY']);
export type VerdictKind = z.infer<typeof VerdictKindSchema>;

/** Result of a deterministic check (a guard, a pattern rule): which rule decided and why. */
export interface RuleFinding {
  verdict: VerdictKind;
  rule: string;
  reason: string;
}

/** Who decided: the policy table, the deterministic rules, the judge model, a person, or the clock. */
export const DecidedBySchema = z.union([
  z.enum(['policy', 'rules', 'judge', 'timeout']),
  z.string().regex(/^human:[A-Za-z0-9@._:-]{1,128}$/, 'expected human:<approver id>'),
  z.string().regex(/^grant:g[a-z2-7]{20}$/, 'expected grant:<grant id>'),
]);
export type DecidedBy = z.infer<typeof DecidedBySchema>;

/**
 * Conditions an approval carries. The executor checks them again right before acting, so a
 * verdict can only ever narrow what the proposal asked for.
 */
export const ConstraintsSchema = z.strictObject({
  scope_limit: z.string().max(2048).optional(),
  require_human_review: z.boolean().default(false),
  files_only: z.array(z.string().max(4096)).max(1000).optional(),
  max_lines: z.int().nonnegative().optional(),
  no_existing_code_deletion: z.boolean().optional(),
});
export type Constraints = z.infer<typeof ConstraintsSchema>;

/** The structured dispute a human sees: both positions side by side (seed 000 §3.3, §8). */
export const DisputeSchema = z.strictObject({
  reason: z.string().max(4096),
  actor_position: z.string().max(16 * 1024),
  judge_position: z.string().max(16 * 1024),
  judge_confidence: z.number().min(0).max(1).nullable(),
});
export type Dispute = z.infer<typeof DisputeSchema>;

export const EscalationSchema = z.strictObject({
  to: z.literal('human'),
  reason: z.string().max(4096),
});

/**
 * Whether the action serves the task the user gave the agent (the proposal's `user_task`), as the judge model saw it:
 * `serves_task`, `other_goal` (a hijacked agent's), `unclear`, or `no_task` when none was given. With a task given,
 * only `serves_task` lets a model's APPROVE stand.
 */
export const TaskAlignmentSchema = z.enum(['serves_task', 'other_goal', 'unclear', 'no_task']);
export type TaskAlignment = z.infer<typeof TaskAlignmentSchema>;

/** What the judge saw and said, kept so a later audit can check the model's work (issue 3). */
export const JudgeAuditSchema = z.strictObject({
  model: z.string().max(256),
  prompt_hash: z.string().max(128),
  latency_ms: z.number().nonnegative(),
  prompt_tokens: z.int().nonnegative().nullable(),
  completion_tokens: z.int().nonnegative().nullable(),
  raw_answer: z
    .string()
    .max(64 * 1024)
    .nullable(),
  /** `sha256:` + hex of the user task text the judge was shown (the proposal's `user_task`), when there was one. */
  user_task_hash: z.string().max(128).optional(),
  /** The model's answer to "does this action serve the user's task?" (see {@link TaskAlignmentSchema}). */
  task_alignment: TaskAlignmentSchema.optional(),
  error: z.string().max(4096).optional(),
});
export type JudgeAudit = z.infer<typeof JudgeAuditSchema>;

/** What the judge found when it checked one cited evidence item (index into cited_evidence). */
export const EvidenceCheckSchema = z.strictObject({
  index: z.int().nonnegative(),
  status: z.enum(EVIDENCE_STATUSES),
  detail: z.string().max(1024),
});

/** What an approval with edits changed (docs/edits.md): both content digests and each field before and after. */
export const EditedSchema = z.strictObject({
  from_digest: z.string().regex(/^[0-9a-f]{64}$/),
  to_digest: z.string().regex(/^[0-9a-f]{64}$/),
  changes: z.array(z.strictObject({ path: z.string().max(300), from: z.unknown(), to: z.unknown() })).max(50),
});

/** Seed 000 §3.2 plus confidence, decided_by and tier. */
export const VerdictSchema = z.strictObject({
  proposal_id: z.string(),
  verdict: VerdictKindSchema,
  reason: z.string().max(8192),
  constraints: ConstraintsSchema.default({ require_human_review: false }),
  escalation: EscalationSchema.nullable().default(null),
  confidence: z.number().min(0).max(1),
  decided_by: DecidedBySchema,
  tier: TierSchema,
  /** Stable name of the rule that decided, when a rule did (e.g. `scope.files_only`). */
  rule: z.string().max(128).optional(),
  decided_at: z.string().optional(),
  judge: JudgeAuditSchema.optional(),
  /** The judge's evidence verification, shown to people deciding an escalation. */
  evidence_checks: z.array(EvidenceCheckSchema).max(50).optional(),
  /** Set when a person approved the action with edits: what is performed is the edited action, not the proposal. */
  edited: EditedSchema.optional(),
});
export type Verdict = z.infer<typeof VerdictSchema>;
