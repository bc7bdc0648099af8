import { ProposalProvenanceSchema } from './provenance';
import { z } from 'zod';
import { BadInputError } from './errors';
import { refusalError, refused, type Checked } from './refusal';
import { describeIssues } from './zod-error';
import { canonicalJson } from './canonical-json';
import { jsonDepthProblem } from './json-depth';
import { PROPOSAL_ID_RE } from './workflow-ids';

/** The longest `user_task` a proposal carries (characters): runtimes cut a longer task to it. */
export const USER_TASK_MAX_CHARS = 8 * 1024;

/** Largest proposal accepted, as UTF-8 JSON. Temporal's own payload limit is 2 MB. */
export const MAX_PROPOSAL_BYTES = 256 * 1024;

const Identifier = z.string().regex(PROPOSAL_ID_RE, 'expected 1-128 characters of letters, digits, . _ : -');
/** A memory store's name (memory_write's `target.store`). */
export const MemoryStoreSchema = Identifier;

export const AgentIdSchema = z
  .string()
  .regex(/^@?[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'expected an agent id such as @engineering');

/**
 * A coding-agent runtime's session id (Claude Code, Codex and Gemini give a UUID): 1-256 characters of letters,
 * digits and `. _ : -`, so it is safe in a log line, a CLI argument and a URL. What a session-scoped grant binds.
 */
export const SessionIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,256}$/, 'expected a session id of 1-256 characters of letters, digits, . _ : -');

/** Action types are snake_case words; unknown (but well-formed) types are routed to a human. */
export const ActionTypeSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'expected a snake_case action type such as forgejo_pr_create');

const RepoName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,100}\/[A-Za-z0-9_.-]{1,100}$/, 'expected owner/name with ASCII letters, digits, _ . -');
const BranchName = z
  .string()
  .min(1)
  .max(255)
  .regex(/^(?!.*\.\.)(?!\/)[A-Za-z0-9._/-]+$/, 'expected a git branch name');
const RelativeOrAbsolutePath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'must not contain NUL bytes');
const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters (a SHA-256)');
const Snowflake = z.string().regex(/^[0-9]{15,25}$/, 'expected a Discord snowflake id');
const HttpUrl = z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).max(2048);
/**
 * The tool-input fields the gate rule's templates do not read, verbatim (src/gate/mapping.ts): the runtime performs
 * them too, so they are judged, approved and digested with the rest.
 */
const UnmappedInput = z.record(z.string(), z.unknown()).optional();
/** Why the gate sent a call the patterns alone would have approved to the judge (a program's config, a LAN host). */
const WhyJudged = z.string().min(1).max(1024);

const FileEditTarget = z.strictObject({ paths: z.array(RelativeOrAbsolutePath).min(1).max(100) });
const FileEditParameters = z.strictObject({
  change: z.enum(['write', 'edit', 'patch', 'notebook']),
  content: z
    .string()
    .max(128 * 1024)
    .optional(),
  edits: z
    .array(
      z.strictObject({
        old_string: z.string().max(64 * 1024),
        new_string: z.string().max(64 * 1024),
        replace_all: z.boolean().optional(),
      }),
    )
    .max(100)
    .optional(),
  patch: z
    .string()
    .max(128 * 1024)
    .optional(),
  notebook: z
    .strictObject({
      cell_id: z.string().max(256).optional(),
      cell_type: z.string().max(32).optional(),
      edit_mode: z.string().max(32).optional(),
    })
    .optional(),
  unmapped_input: UnmappedInput,
});
const WebRequestParameters = z.strictObject({
  prompt: z
    .string()
    .max(16 * 1024)
    .optional(),
  domains: z.array(z.string().max(256)).max(100).optional(),
  unmapped_input: UnmappedInput,
});

export const EvidenceSchema = z.strictObject({
  type: z.string().min(1).max(64),
  url: HttpUrl.optional(),
  source: z.string().min(1).max(512).optional(),
  title: z.string().max(512).optional(),
});
export type Evidence = z.infer<typeof EvidenceSchema>;

export const ScopeClaimSchema = z.strictObject({
  files_only: z.array(RelativeOrAbsolutePath).max(1000).optional(),
  max_lines: z.int().nonnegative().optional(),
  no_existing_code_deletion: z.boolean().optional(),
});
export type ScopeClaim = z.infer<typeof ScopeClaimSchema>;

/** Target and parameter shapes of the action types this project knows (seed 000 §2). */
/** A tool call no rule maps: the tool and its exact arguments, and its definition's hash when the runtime has one. */
const UnmappedToolCall = {
  target: z.strictObject({ server: z.string().min(1).max(128), tool: z.string().min(1).max(256) }),
  parameters: z.strictObject({
    arguments: z.record(z.string(), z.unknown()),
    tool_definition_hash: Sha256Hex.optional(),
  }),
};

export const actionShapes = {
  memory_write: {
    target: z.strictObject({ store: Identifier.default('memory') }),
    parameters: z.strictObject({
      content: z
        .string()
        .min(1)
        .max(64 * 1024),
    }),
  },
  vault_note_create: {
    target: z.strictObject({ vault: Identifier, path: RelativeOrAbsolutePath }),
    parameters: z.strictObject({ title: z.string().max(256).optional(), content: z.string().max(128 * 1024) }),
  },
  issue_comment: {
    target: z.strictObject({ repo: RepoName, issue: z.int().positive() }),
    parameters: z.strictObject({
      body: z
        .string()
        .min(1)
        .max(64 * 1024),
    }),
  },
  discord_message: {
    target: z.strictObject({ channel_id: Snowflake }),
    parameters: z.strictObject({ content: z.string().min(1).max(2000) }),
  },
  forgejo_pr_create: {
    target: z.strictObject({ repo: RepoName, branch: BranchName, base: BranchName }),
    parameters: z.strictObject({
      files_changed: z.array(RelativeOrAbsolutePath).min(1).max(10_000),
      estimated_diff_lines: z.int().nonnegative(),
      title: z.string().max(256).optional(),
      body: z
        .string()
        .max(64 * 1024)
        .optional(),
    }),
  },
  file_write: {
    target: z.strictObject({ path: RelativeOrAbsolutePath }),
    parameters: z.strictObject({
      content: z.string().max(1024 * 1024),
      mode: z.enum(['overwrite', 'append', 'create']).default('create'),
    }),
  },
  exec: {
    target: z.strictObject({ host: Identifier.default('local') }),
    parameters: z.strictObject({
      command: z
        .array(
          z
            .string()
            .max(4096)
            .refine((a) => !a.includes('\0'), 'must not contain NUL bytes'),
        )
        .min(1)
        .max(256),
      cwd: RelativeOrAbsolutePath.optional(),
      timeout_ms: z.int().positive().max(3_600_000).optional(),
    }),
  },
  web_publish: {
    target: z.strictObject({ url: HttpUrl }),
    parameters: z.strictObject({
      body: z.string().max(1024 * 1024),
      content_type: z.string().max(128).default('text/plain; charset=utf-8'),
      method: z.enum(['POST', 'PUT']).default('POST'),
    }),
  },
  financial_op: {
    target: z.strictObject({ account: z.string().min(1).max(128) }),
    parameters: z.strictObject({
      amount: z.number().positive().finite(),
      currency: z.string().regex(/^[A-Z]{3}$/, 'expected an ISO 4217 code such as EUR'),
      memo: z.string().max(1024).optional(),
    }),
  },
  impersonation: {
    target: z.strictObject({ identity: z.string().min(1).max(256) }),
    parameters: z.strictObject({ purpose: z.string().min(1).max(4096) }),
  },
  credential_rotation: {
    target: z.strictObject({ credential: z.string().min(1).max(256) }),
    parameters: z.strictObject({ reason: z.string().max(4096).optional() }),
  },
  /**
   * A shell command a coding agent's runtime runs itself once approved (through its hook): the command line as the
   * tool receives it, the directory it runs in, and what the hooks layer's shell parser made of it (`parsed`: the
   * simple commands and redirections when the line reduces to them, otherwise why not). The agent's own description
   * of the command is its statement, not part of the action.
   */
  shell_command: {
    target: z.strictObject({ cwd: RelativeOrAbsolutePath }),
    parameters: z.strictObject({
      command: z
        .string()
        .min(1)
        .max(64 * 1024),
      parsed: z.strictObject({
        reducible: z.boolean(),
        commands: z
          .array(
            z.strictObject({
              argv: z.array(z.string().max(4096)).min(1).max(256),
              redirects: z
                .array(z.strictObject({ op: z.string().min(1).max(8), target: z.string().max(4096) }))
                .max(64),
            }),
          )
          .max(64),
        why: z.string().max(512).optional(),
      }),
      unmapped_input: UnmappedInput,
    }),
  },
  /**
   * A file change a coding agent's runtime makes itself once approved: the paths (resolved, inside the hook roots)
   * and the change as the judge sees it (the new content, the replacements, or the patch), bounded.
   */
  file_edit: { target: FileEditTarget, parameters: FileEditParameters },
  /**
   * A file change like `file_edit` to a file that names programs to run later (git hooks, CI workflows, `.mcp.json`,
   * editor tasks: `spec.hooks.files.runsPrograms`): judged, never approved by patterns alone; `why_judged` says which.
   */
  program_config_edit: {
    target: FileEditTarget,
    parameters: FileEditParameters.extend({ why_judged: WhyJudged }),
  },
  /** A network read a coding agent's runtime makes itself once approved: a URL fetched or a query searched. */
  web_request: {
    target: z
      .strictObject({ url: HttpUrl.optional(), query: z.string().min(1).max(2048).optional() })
      .refine((t) => (t.url === undefined) !== (t.query === undefined), 'expected exactly one of url and query'),
    parameters: WebRequestParameters,
  },
  /**
   * A network read like `web_request` that patterns alone do not approve (`why_judged`): a loopback, private,
   * link-local or IP-literal host, a scheme other than http(s), a long encoded run (src/gate/web.ts).
   */
  web_request_sensitive: {
    target: z
      .strictObject({ url: z.string().min(1).max(2048).optional(), query: z.string().min(1).max(2048).optional() })
      .refine((t) => (t.url === undefined) !== (t.query === undefined), 'expected exactly one of url and query'),
    parameters: WebRequestParameters.extend({ why_judged: WhyJudged }),
  },
  /**
   * A tool call through a gate (the MCP proxy, a runtime's hook) that no rule maps: the tool and its exact arguments,
   * and its definition's hash when the runtime has one (MCP always does).
   */
  mcp_tool_call: UnmappedToolCall,
  /** The same, for a call that did not come through MCP (a hook, a framework adapter, the gate service's API). */
  tool_call: UnmappedToolCall,
} as const;

export type KnownActionType = keyof typeof actionShapes;
export const KNOWN_ACTION_TYPES = Object.keys(actionShapes) as KnownActionType[];

export function isKnownActionType(t: string): t is KnownActionType {
  return Object.prototype.hasOwnProperty.call(actionShapes, t);
}

const GenericObject = z.record(z.string(), z.unknown());

/** The envelope of seed 000 §3.1; `target` and `parameters` are refined per action type below. */
/** A name from an MCP server or policy (server, tool, rule): bounded, printable, never instructions. */
const PerformerText = z
  .string()
  .min(1)
  .max(256)
  .regex(/^\P{Cc}+$/u, 'expected printable text without control characters');

export const ProposalEnvelopeSchema = z.strictObject({
  proposal_id: Identifier,
  agent_id: AgentIdSchema,
  action_type: ActionTypeSchema,
  target: GenericObject,
  parameters: GenericObject,
  justification: z
    .string()
    .min(1)
    .max(16 * 1024),
  cited_evidence: z.array(EvidenceSchema).max(50).default([]),
  scope_claim: ScopeClaimSchema.default({}),
  revision_of: Identifier.optional(),
  /**
   * What the user asked the agent to do, as the runtime saw it (a session's first user message or stated goal). The
   * judge checks that the action serves it: an action that serves another goal is never approved by the model. It is
   * untrusted text like every other field (it came through the agent's runtime): the prompt fences and labels it,
   * and the injection scan reads it. Optional: direct callers fill it in, runtimes that know the task will too.
   */
  user_task: z.string().min(1).max(USER_TASK_MAX_CHARS).optional(),
  /**
   * The coding-agent runtime's session the call came from, when the gate knows it (a hook's `session_id`); absent for
   * the MCP proxy and direct callers. Part of the content digest, and of a performed call's identity: the identical
   * call in two sessions is two proposals, so a grant scoped to one session (docs/grants.md) can never approve, or be
   * found through, the other session's proposal. Absent, the digest is what it always was.
   */
  session_id: SessionIdSchema.optional(),
  /**
   * Set by the gate when a consequential call carries values that entered its session from untrusted content (which
   * argument, which value, from where; docs/provenance.md). Untrusted text like every field: shown to the judge as
   * data. A proposal with taints never passes on rules alone. Part of the content digest.
   */
  provenance: ProposalProvenanceSchema.optional(),
  /**
   * Set when the caller performs the approved action itself (the MCP proxy forwards the call): agent-judge's
   * executors never run it, and the caller reports the outcome. `call` is the digest of the exact call (tool, its
   * definition hash, arguments); `sequence` counts identical calls that finished before, so a legitimate repeat is
   * a new proposal. `server`, `tool`, `tool_definition_hash` and `rule` say which MCP call it was and which
   * `spec.mcp` rule mapped it, for the audit record (optional: a proposal a caller performs need not come from an
   * MCP call). Part of the content digest.
   */
  performer: z
    .strictObject({
      by: z.literal('caller'),
      call: Sha256Hex,
      sequence: z.int().min(0).max(1_000_000),
      server: PerformerText.optional(),
      tool: PerformerText.optional(),
      tool_definition_hash: Sha256Hex.optional(),
      rule: PerformerText.optional(),
      /** The runtime whose gate made the proposal (`claude-code`, ...); absent for the MCP proxy. */
      runtime: PerformerText.optional(),
    })
    .optional(),
});

/** A proposal: what an actor wants to do, where, and why. */
export type Proposal = z.infer<typeof ProposalEnvelopeSchema>;

/**
 * Validates a proposal: its nesting depth ({@link MAX_JSON_DEPTH}), the envelope, then the target and
 * parameters of its action type.
 */
export function safeParseProposal(input: unknown): Checked<Proposal> {
  // Before zod or anything else recursive sees it: hostile nesting must not overflow the stack.
  const tooDeep = jsonDepthProblem(input, 'proposal');
  if (tooDeep) return refused('bad-input', tooDeep);
  const envelope = ProposalEnvelopeSchema.safeParse(input);
  if (!envelope.success) return refused('bad-input', describeIssues('proposal', envelope.error.issues));
  const proposal = envelope.data;
  if (!isKnownActionType(proposal.action_type)) return { ok: true, value: proposal };
  const shape = actionShapes[proposal.action_type];
  const target = shape.target.safeParse(proposal.target);
  const parameters = shape.parameters.safeParse(proposal.parameters);
  const problems = [
    ...(target.success ? [] : [describeIssues('proposal.target', target.error.issues)]),
    ...(parameters.success ? [] : [describeIssues('proposal.parameters', parameters.error.issues)]),
  ];
  if (problems.length > 0) return refused('bad-input', problems.join('; '));
  return {
    ok: true,
    value: {
      ...proposal,
      target: target.data as Record<string, unknown>,
      parameters: parameters.data as Record<string, unknown>,
    },
  };
}

/** Like {@link safeParseProposal} but throws {@link BadInputError}; also checks the size limit. */
export function parseProposal(input: unknown): Proposal {
  const tooDeep = jsonDepthProblem(input, 'proposal');
  if (tooDeep) throw new BadInputError(tooDeep);
  const size = new TextEncoder().encode(JSON.stringify(input) ?? '').length;
  if (size > MAX_PROPOSAL_BYTES) {
    throw new BadInputError(`proposal: ${size} bytes is over the ${MAX_PROPOSAL_BYTES}-byte limit`);
  }
  const result = safeParseProposal(input);
  if (!result.ok) throw refusalError(result.refusal);
  return result.value;
}

type ShapeOf<T extends KnownActionType> = (typeof actionShapes)[T];

/**
 * A proposal of one known action type, with that type's target and parameters (defaults applied).
 * What {@link parseProposal} returns for that type; reach it from a {@link Proposal} with
 * {@link isAction} or {@link knownProposal} instead of casting fields one by one.
 */
export type ProposalOf<T extends KnownActionType> = Omit<Proposal, 'action_type' | 'target' | 'parameters'> & {
  action_type: T;
  target: z.output<ShapeOf<T>['target']>;
  parameters: z.output<ShapeOf<T>['parameters']>;
};

/**
 * Every known action type as one discriminated union: a `switch` on `action_type` narrows target
 * and parameters. Unknown (well-formed) types are not members: they stay a plain {@link Proposal}
 * with generic target and parameters, and go to a human.
 *
 * Why `Proposal` itself is not this union plus a catch-all: TypeScript does not narrow a union
 * whose catch-all member has `action_type: string` (the literal `'exec'` is a string too), so
 * every rule would need a cast again. Known and unknown are separated by a guard instead.
 */
export type KnownProposal = { [T in KnownActionType]: ProposalOf<T> }[KnownActionType];

/**
 * Narrows a proposal to one known action type. The guard trusts the invariant that every
 * `Proposal` value came out of {@link parseProposal} or {@link safeParseProposal} (the client,
 * the CLI and the workflow's start all validate), which checked target and parameters against
 * this type's shape; so it compares `action_type` only and never parses again.
 */
export function isAction<T extends KnownActionType>(proposal: Proposal, type: T): proposal is ProposalOf<T> {
  return proposal.action_type === type;
}

/** The proposal as a {@link KnownProposal} to `switch` on, or undefined for an unknown action type. */
export function knownProposal(proposal: Proposal): KnownProposal | undefined {
  return isKnownActionType(proposal.action_type) ? (proposal as KnownProposal) : undefined;
}

/**
 * A short, stable name for where an action lands; the audit flag counts rejections per target
 * ("repeat rejections on one target", seed 000 §3.3).
 */
export function targetKey(proposal: Proposal): string {
  const p = knownProposal(proposal);
  if (!p) return `${proposal.action_type}:${canonicalJson(proposal.target)}`.slice(0, 256);
  switch (p.action_type) {
    case 'memory_write':
      return `memory:${p.target.store}`;
    case 'vault_note_create':
      return `vault:${p.target.vault}/${p.target.path}`;
    case 'issue_comment':
      return `${p.target.repo}#${p.target.issue}`;
    case 'discord_message':
      return `discord:${p.target.channel_id}`;
    case 'forgejo_pr_create':
      return `forgejo:${p.target.repo}`;
    case 'file_write':
      return `file:${p.target.path}`;
    case 'exec':
      return `exec:${p.target.host}:${p.parameters.command[0] ?? ''}`;
    case 'web_publish':
      return `web:${p.target.url}`;
    case 'financial_op':
      return `account:${p.target.account}`;
    case 'impersonation':
      return `identity:${p.target.identity}`;
    case 'credential_rotation':
      return `credential:${p.target.credential}`;
    case 'shell_command':
      return `shell:${p.target.cwd}:${p.parameters.parsed.commands[0]?.argv[0] ?? ''}`;
    case 'file_edit':
    case 'program_config_edit':
      return `file:${p.target.paths[0] ?? ''}`;
    case 'web_request':
    case 'web_request_sensitive':
      return p.target.url !== undefined ? `web:${p.target.url}` : 'web:search';
    case 'mcp_tool_call':
      return `mcp:${p.target.server}/${p.target.tool}`;
    case 'tool_call':
      return `tool:${p.target.server}/${p.target.tool}`;
  }
}

/**
 * The target key as stored in the `Target` search attribute: quotes and backslashes replaced so it
 * can sit inside a visibility query literal, and bounded in length.
 */
export function searchableTarget(proposal: Proposal): string {
  return targetKey(proposal)
    .replace(/["'\\]/g, '_')
    .slice(0, 256);
}

export { canonicalJson } from './canonical-json';
export { MAX_JSON_DEPTH } from './json-depth';
