/**
 * The gate service's runtime-neutral HTTP API (`/v1`), as zod schemas: what an agent in any language sends and gets
 * back. The same schemas validate requests on the server, type the TypeScript client (src/gate/remote.ts) and make the
 * OpenAPI 3.1 document (src/gate/service/openapi.ts), so the three cannot drift. No agent names itself here: the
 * bearer token decides whose calls and proposals these are.
 */
import { z } from 'zod';
import { ClarificationFieldsSchema } from '../../contracts/messages';
import { OUTCOME_STATUSES } from '../../contracts/lifecycle';
import { VerdictSchema } from '../../contracts/verdict';

/** Runtimes with endpoints of their own (`/hooks/<runtime>`, the MCP proxy): not spoken for through `/v1/calls`. */
export const RESERVED_RUNTIMES = ['mcp', 'claude-code', 'codex', 'gemini', 'openclaw'] as const;

/** The shortest hold a request may ask for (ms): time for the proposal to start and say where it stands. */
export const MIN_HOLD_MS = 1000;
/** The longest hold a request may ask for (ms); the policy's `spec.hooks.holdFor` bounds it further. */
export const MAX_HOLD_MS = 120_000;

export const RuntimeNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, 'expected a runtime name such as openai-agents (lowercase, digits, -)')
  .refine((r) => !(RESERVED_RUNTIMES as readonly string[]).includes(r), {
    message: `reserved for an endpoint of its own (${RESERVED_RUNTIMES.join(', ')})`,
  });

/** `POST /v1/calls`: one tool call the agent wants to make. */
export const CallRequestSchema = z.strictObject({
  /** The framework or program making the call (part of the call's identity); default `api`. */
  runtime: RuntimeNameSchema.default('api'),
  /** The tool family the policy's rules match (`server` in a spec.mcp rule), e.g. `agents`, `ai-sdk`. */
  server: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/, 'expected a server name such as agents'),
  tool: z.string().min(1).max(256),
  /** The arguments exactly as the tool would receive them. */
  arguments: z.record(z.string(), z.unknown()),
  tool_definition_hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits')
    .optional(),
  /** The agent's session or thread: a grant may be scoped to it; part of the proposal's identity. */
  session_id: z.string().min(1).max(1024).optional(),
  /** The runtime's id of this call (audit only). */
  call_id: z.string().min(1).max(256).optional(),
  /** What the user asked the agent, as untrusted context for the judge. */
  user_task: z
    .string()
    .max(64 * 1024)
    .optional(),
  /** The agent's own justification, evidence and scope for this call (each optional). */
  agent: ClarificationFieldsSchema.optional(),
  /** How long to hold the request while a judge or a person decides before answering `pending` (ms). */
  hold_ms: z.number().int().min(MIN_HOLD_MS).max(MAX_HOLD_MS).optional(),
});
export type CallRequest = z.infer<typeof CallRequestSchema>;

const ProposalRefFields = {
  proposal_id: z.string(),
  workflow_id: z.string(),
  verdict: VerdictSchema.nullable(),
};

/** The words the agent's model should read when the call is not performed (the same in every runtime). */
const Text = z.string().describe("what the agent's model reads: the same words in every runtime");

/** The gate's answer to a call (`kind`), as data. Only `forward` may be performed, exactly as its `arguments` say. */
export const CallAnswerSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('forward'),
    rule: z.string(),
    /** Perform exactly these: the call's own arguments, or a person's edited ones. */
    arguments: z.record(z.string(), z.unknown()),
    /** The lease to report on (`POST /v1/calls/{lease.id}/outcome`), or null when no proposal was needed. */
    lease: z
      .strictObject({
        id: z.string(),
        ...ProposalRefFields,
        /** What a person changed, when the call was approved with edits (tell the agent). */
        edits: z.array(z.record(z.string(), z.unknown())).nullable(),
        /** Report by then; after it the proposal records "forwarded, no outcome". */
        report_by: z.string(),
      })
      .nullable(),
    /** When approved with edits: the words that tell the model what was changed. */
    text: z.string().nullable(),
  }),
  z.strictObject({
    kind: z.literal('deny'),
    reason: z.string(),
    recorded: z.boolean(),
    ...ProposalRefFields,
    text: Text,
  }),
  z.strictObject({
    kind: z.literal('clarify'),
    reason: z.string(),
    rounds_left: z.number().int(),
    deadline: z.string().nullable(),
    ...ProposalRefFields,
    text: Text,
  }),
  z.strictObject({
    kind: z.literal('pending'),
    waiting_for: z.enum(['judge', 'human']),
    status: z.string(),
    deadline: z.string().nullable(),
    retry_after_ms: z.number().int(),
    ...ProposalRefFields,
    text: Text,
  }),
  z.strictObject({
    kind: z.literal('refused'),
    reason: z.string(),
    proposal_id: z.string().nullable(),
    workflow_id: z.string().nullable(),
    text: Text,
  }),
]);
export type CallAnswer = z.infer<typeof CallAnswerSchema>;

/** `POST /v1/calls/{id}/outcome`: what happened when the forwarded call was performed. */
export const OutcomeRequestSchema = z.strictObject({
  outcome: z.enum(['ok', 'tool_error', 'unknown', 'performer_failure', 'not_performed']),
  detail: z.string().max(2000).optional(),
});
export type OutcomeRequest = z.infer<typeof OutcomeRequestSchema>;

export const OutcomeAnswerSchema = z.strictObject({ recorded: z.literal(true), proposal_id: z.string() });

/**
 * `POST /v1/capabilities/redeem`: a capability token spent once, through its proposal's workflow (the
 * `redeemCapability` Update), for exactly the action about to be performed (its digest, computed by the performer).
 */
export const RedeemRequestSchema = z.strictObject({
  token: z.string().min(1).max(8192),
  action_sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The audience the performer is (`executor:<action_type>`, `mcp:<server>`): must be the token's. */
  audience: z.string().min(1).max(200),
  /** Names this redemption: the same value when retrying it gets the same answer. Default: a new redemption. */
  nonce: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/)
    .optional(),
});
export type RedeemRequest = z.infer<typeof RedeemRequestSchema>;

export const RedeemAnswerSchema = z.strictObject({
  redeemed: z.literal(true),
  redemption: z.strictObject({
    token_id: z.string(),
    audience: z.string(),
    redeemer: z.string(),
    nonce: z.string(),
    redeemed_at: z.string(),
  }),
});

/**
 * A proposal as agent-judge reports it (seed 000 §3.2 and the run's state): the verdict, its history, the execution's
 * result, deadlines. Documented by its main fields; further fields may be added.
 */
export const ProposalOutcomeSchema = z.looseObject({
  proposal_id: z.string(),
  workflow_id: z.string(),
  status: z.enum(OUTCOME_STATUSES),
  verdict: VerdictSchema.nullable(),
  verdicts: z.array(VerdictSchema),
  execution: z.record(z.string(), z.unknown()).nullable(),
});

/** `?wait_ms=`: how long `POST /v1/proposals` and `GET /v1/proposals/{id}` wait for the proposal to settle. */
export const WaitQuerySchema = z.strictObject({
  wait_ms: z.coerce.number().int().min(0).max(MAX_HOLD_MS).optional(),
});

/** The error body of every 4xx and 5xx answer: what was wrong, naming the field and the rule. */
export const ErrorSchema = z.strictObject({
  error: z.string(),
  /** Which rule refused (`limits.proposals-per-agent`, `body.arguments`, ...), when one did. */
  code: z.string().optional(),
});
