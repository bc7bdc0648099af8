import { ProvenanceSettingsSchema } from './provenance';
import { z } from 'zod';
import { ActionTypeSchema, AgentIdSchema, MemoryStoreSchema } from './proposal';
import { TierSchema } from './verdict';
import { ApproverIdSchema } from './messages';
import { JudgeSettingsSchema } from './judge-settings';
import { PublicKeySchema } from './identity';
import { ApproverPasskeysSchema } from './passkey';
import { durationMs } from './duration';
import { MetricsSettingsSchema } from './metrics';
import { ReviewSettingsSchema } from './review';
import { CapabilitySettingsSchema } from './capability-settings';
import { McpSettingsSchema } from './mcp';
import { HooksSettingsSchema } from './hooks';
import { CodeCarryingTypeSchema, MAX_GRANT_USES } from './grant';

/** A duration such as `90s`, `5m`, `1h`, `7d`, or a number of milliseconds. */
export const DurationSchema = z.union([
  z.int().positive(),
  z.string().regex(/^\d+(\.\d+)?\s*(ms|s|m|h|d)$/, 'expected a duration such as 30s, 5m, 1h or 7d'),
]);
export type Duration = z.infer<typeof DurationSchema>;

/** Milliseconds in a {@link Duration}; workflow code imports it from `./duration`, which builds no schema. */
export { durationMs };

function safeDurationMs(d: Duration): number | null {
  try {
    return durationMs(d);
  } catch {
    return null;
  }
}

const RegexSource = z.string().refine((src) => {
  try {
    new RegExp(src, 'u');
    return true;
  } catch {
    return false;
  }
}, 'expected a valid regular expression');

/** Approver and bot keys must be usable Ed25519 keys: a typo is refused at load, not at the first decision. */
const PublicKeyText = PublicKeySchema;

export const RiskEntrySchema = z.strictObject({
  actionType: ActionTypeSchema,
  surface: z.string().max(256),
  surfaceArea: z.int().min(1).max(5),
  actionRisk: z.int().min(1).max(5),
  tier: TierSchema,
});

export const ExecAllowSchema = z.strictObject({
  command: z.string().regex(/^[A-Za-z0-9._+-]+$/, 'expected a bare program name such as git'),
  /** When set, argv[1] must be one of these (e.g. git status|log|diff). */
  subcommands: z.array(z.string().min(1)).optional(),
  /**
   * When set, every argument that starts with `-` must be one of these exactly; an entry ending in
   * `=*` allows any value (`--max-count=*`). Exact matching also stops git's abbreviated options
   * (`--ext` for `--ext-diff`).
   */
  options: z
    .array(
      z.string().regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*(=\*)?$/, 'expected an option such as --stat or --max-count=*'),
    )
    .optional(),
  /** Arguments that are not options are paths and must stay inside exec.cwdRoots (default true). */
  pathArgs: z.boolean().default(true),
});

/** A repository of the operator's that git commands may inspect (spec.exec.git.repositories). */
export const GitRepositorySchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a repository name such as app'),
  /**
   * The checkout (its `.git` directory is the repository) or a bare repository; relative paths resolve against the
   * working directory. A git command runs only with its cwd equal to or inside one of these.
   */
  path: z.string().min(1),
});

/** How allowlisted git commands run: only in repositories the operator names (docs/execution.md#git). */
export const ExecGitSettingsSchema = z
  .strictObject({ repositories: z.array(GitRepositorySchema).default([]) })
  .refine((g) => new Set(g.repositories.map((r) => r.name)).size === g.repositories.length, {
    message: 'repository names must be unique',
    path: ['repositories'],
  })
  .default({ repositories: [] });

export const PatternRuleSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'expected a rule name such as secrets.private-key'),
  pattern: RegexSource,
  /**
   * Dotted path into the proposal (e.g. `target.path`); a path to an object or array covers every
   * value inside it. The whole proposal text when omitted.
   */
  field: z.string().max(128).optional(),
});

/** Durations the audit settings bound: {@link DurationSchema}, then a range check naming the field's limits. */
function boundedDuration(fallback: string, minMs: number, rule: string) {
  return DurationSchema.default(fallback).refine((d) => {
    // Runs even when the duration is malformed (zod reports that issue itself): only bound it here.
    const ms = typeof d === 'number' || /^\d/.test(d) ? safeDurationMs(d) : null;
    return ms === null || ms >= minMs;
  }, rule);
}

const DAY_MS = 86_400_000;

/**
 * Where closed proposal histories are copied before the namespace's retention deletes them, and how often (a
 * Temporal Schedule runs the archive workflow; see docs/audit.md).
 */
export const ArchiveSettingsSchema = z
  .strictObject({
    /** Folder on the archive worker's host; relative paths resolve against the working directory. */
    dir: z.string().min(1).default('.agent-judge/archive'),
    /** Interval of the archive Schedule. */
    every: boundedDuration('1h', 60_000, 'expected a duration of at least 1m'),
  })
  .default({ dir: '.agent-judge/archive', every: '1h' });

/** The audit trail: repeated-rejection flags, how long Temporal keeps closed proposals, and the archive. */
export const AuditSettingsSchema = z
  .strictObject({
    repeatRejections: z.int().min(2).default(3),
    window: DurationSchema.default('24h'),
    /**
     * How long the Temporal namespace keeps closed workflows (`agent-judge dev` sets it; Temporal's minimum is one
     * day). The weekly review needs more than a week; the archive keeps histories beyond it.
     */
    retention: boundedDuration(
      '90d',
      DAY_MS,
      'expected a duration of at least 1d (Temporal keeps closed workflows at least a day)',
    ),
    archive: ArchiveSettingsSchema,
  })
  .refine(
    (a) => {
      const retention = safeDurationMs(a.retention);
      const every = safeDurationMs(a.archive.every);
      return retention === null || every === null || every * 2 <= retention;
    },
    {
      message: 'archive.every must be at most half of retention, so every history is archived before it expires',
      path: ['archive', 'every'],
    },
  )
  .default({
    repeatRejections: 3,
    window: '24h',
    retention: '90d',
    archive: { dir: '.agent-judge/archive', every: '1h' },
  });

const MIB = 1024 * 1024;

/**
 * Per-agent limits (issue 21): what one agent may take of the shared deployment, so a flood from one agent never
 * starves another's proposals or buries the approvers. Proposal limits are checked where proposals are submitted
 * (src/client/limits.ts), counted from Temporal visibility: approximate by visibility's lag (docs/security.md,
 * Per-agent limits); the session limit by the MCP HTTP front. Each refusal names its limit and when it resets.
 */
export const LimitsSettingsSchema = z
  .strictObject({
    /** Proposals one agent may submit per window (a sliding window over the proposals' start times). */
    proposals: z
      .strictObject({
        perAgent: z.int().min(1).default(120),
        window: DurationSchema.default('1m'),
      })
      .default({ perAgent: 120, window: '1m' }),
    /** Proposals of one agent that may wait for a person at once; beyond it a new human-only proposal is refused. */
    pendingEscalationsPerAgent: z.int().min(1).default(20),
    /**
     * MCP sessions one agent may have open on `agent-judge mcp --http` (each holds an upstream connection, often a
     * process); beyond it that agent's `initialize` gets HTTP 429. At most the front's shared bound (256).
     */
    httpSessionsPerAgent: z.int().min(1).max(256).default(8),
  })
  .default({ proposals: { perAgent: 120, window: '1m' }, pendingEscalationsPerAgent: 20, httpSessionsPerAgent: 8 });
export type LimitsSettings = z.infer<typeof LimitsSettingsSchema>;

/**
 * Agent memory (memory_write): where the stores live, which stores each agent may write besides its own (a store
 * named by its agent id, `@` left out, or starting with it and `.` or `:`), and how large one store may grow.
 */
export const MemorySettingsSchema = z
  .strictObject({
    dir: z.string().min(1).default('.agent-judge/memory'),
    /** Agent id (or `*`, every agent) -> the stores it may write besides its own. */
    stores: z.record(z.union([AgentIdSchema, z.literal('*')]), z.array(MemoryStoreSchema)).default({}),
    maxStoreBytes: z
      .int()
      .positive()
      .default(16 * MIB),
  })
  .default({ dir: '.agent-judge/memory', stores: {}, maxStoreBytes: 16 * MIB });

/**
 * Bounds on scoped grants (docs/grants.md): which tiers a grant may cover (`human-only` only when listed; [] turns
 * grants off), the longest a grant may live, the most uses it may allow, and which code-carrying action types may have
 * pattern grants that leave their code free (none by default). Checked when a grant starts and again at
 * every use, with the policy in force then.
 */
export const GrantSettingsSchema = z
  .strictObject({
    tiers: z.array(TierSchema).default(['lightweight-approval', 'full-judge-review']),
    maxLifetime: DurationSchema.default('8h'),
    maxUses: z.int().min(1).max(MAX_GRANT_USES).default(200),
    /**
     * Action types that carry code (shell_command, exec, file_write, file_edit) whose pattern grants may leave the
     * code free: a grant on shell_command that keeps only `target.cwd` equal then approves any command there. Empty
     * by default: a grant never widens code, it pins the command or body (src/policy/grants.ts).
     */
    allowUnpinnedCode: z.array(CodeCarryingTypeSchema).default([]),
  })
  .default({
    tiers: ['lightweight-approval', 'full-judge-review'],
    maxLifetime: '8h',
    maxUses: 200,
    allowUnpinnedCode: [],
  });
export type GrantSettings = z.infer<typeof GrantSettingsSchema>;

/** The CompliancePolicy resource, shaped like a Kubernetes object so it can later be a CRD. */
export const CompliancePolicySchema = z.strictObject({
  apiVersion: z.literal('agent-judge.dev/v1alpha1'),
  kind: z.literal('CompliancePolicy'),
  metadata: z.strictObject({
    name: z.string().min(1).max(253),
    namespace: z.string().max(253).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z.strictObject({
    /** Tier for action types the risk matrix does not list. Never no-judge. */
    defaultTier: z.enum(['human-only', 'full-judge-review']).default('human-only'),
    riskMatrix: z.array(RiskEntrySchema).min(1),
    thresholds: z
      .strictObject({ clarify: z.number().min(0).max(1), human: z.number().min(0).max(1) })
      .refine((t) => t.human <= t.clarify, 'thresholds.human must not be above thresholds.clarify'),
    clarify: z.strictObject({ maxRounds: z.int().min(0).max(10), timeout: DurationSchema }),
    escalation: z.strictObject({
      timeout: DurationSchema,
      approvers: z.array(ApproverIdSchema).default([]),
      /** Distinct approvals needed per tier (default 1); a single reject always ends it. */
      quorum: z.partialRecord(TierSchema, z.int().min(1).max(10)).default({}),
      /** Share of the deadline after which approvers are reminded (0 disables). */
      reminderAt: z.number().min(0).max(1).default(0.5),
      /**
       * Public keys (unpadded base64url, 32 bytes; `agent-judge circles keygen` makes a pair) of
       * approvers whose decisions must be signed. Without a key, an approver id is only a claim.
       */
      approverKeys: z.record(ApproverIdSchema, PublicKeyText).default({}),
      /**
       * Approvers' passkeys (WebAuthn credentials): a decision signed by one of them counts as signed by that
       * approver. The inbox enrols passkeys into a registry file (AGENT_JUDGE_PASSKEYS) that the workflow worker
       * merges in here; listing them in the policy is for deployments without a shared registry (docs/inbox.md).
       */
      approverPasskeys: ApproverPasskeysSchema.default({}),
      /** Key of the Discord bot: it signs the decisions of `discord:<id>` approvers it verified. */
      discordBotKey: PublicKeyText.optional(),
      /** Key of the Slack app: it signs the decisions of `slack:<user id>` approvers it verified. */
      slackBotKey: PublicKeyText.optional(),
      /**
       * Refuse every unsigned decision (approvers without a key can then never decide); `false` accepts them (an
       * approver id without a key is then only a claim). Unset: `agent-judge worker` refuses them when an approver
       * has no key, `agent-judge dev` accepts them and says so at start.
       */
      requireSignedDecisions: z.boolean().optional(),
    }),
    exec: z.strictObject({
      allowlist: z.array(ExecAllowSchema),
      /** Directories a command may run in; the first is the default working directory. */
      cwdRoots: z.array(z.string().min(1)).min(1),
      defaultTimeoutMs: z.int().positive().default(10_000),
      maxOutputBytes: z
        .int()
        .positive()
        .default(64 * 1024),
      /** The repositories git may inspect; with none, every git command is refused. */
      git: ExecGitSettingsSchema,
    }),
    files: z.strictObject({
      /** Directories file writes may touch, after resolving `..` and symlinks. */
      roots: z.array(z.string().min(1)).min(1),
    }),
    memory: MemorySettingsSchema,
    /** Per-agent limits: proposals per window, pending escalations, MCP HTTP sessions (docs/security.md). */
    limits: LimitsSettingsSchema,
    lightweight: z.strictObject({
      /** A match anywhere rejects, naming the rule. */
      deny: z.array(PatternRuleSchema).default([]),
      /** Per action type: when listed, one of these must match for an approval. */
      topics: z.record(ActionTypeSchema, z.array(PatternRuleSchema)).default({}),
    }),
    /** Action types whose verdicts are recorded but not enforced (seed 000 §7 phase 2). */
    shadow: z.array(ActionTypeSchema).default([]),
    audit: AuditSettingsSchema,
    execution: z
      .strictObject({
        /**
         * How long the executor may go silent before Temporal counts it dead and retries the action
         * elsewhere: executors heartbeat while they work, so a killed executor is noticed this fast.
         */
        heartbeatTimeout: DurationSchema.default('10s')
          .refine((d) => {
            // Runs even when the duration is malformed (zod reports that issue itself): only bound it here.
            const ms = typeof d === 'number' || /^\d/.test(d) ? safeDurationMs(d) : null;
            return ms === null || (ms >= 1000 && ms <= 600_000);
          }, 'expected a duration between 1s and 10m')
          .describe('executors heartbeat while they act; silent this long (1s to 10m), one counts as dead'),
      })
      .default({ heartbeatTimeout: '10s' }),
    webhook: z
      .strictObject({
        /**
         * Action types delivered to an HTTP endpoint of the operator's (the generic webhook
         * executor): the approved proposal and verdict are POSTed there with an Idempotency-Key.
         */
        routes: z.record(ActionTypeSchema, z.url({ protocol: /^https?$/ })).default({}),
        timeoutMs: z.int().positive().default(10_000),
      })
      .default({ routes: {}, timeoutMs: 10_000 }),
    /** Targets and alert thresholds of the judge's metrics (seed 000 §6); defaults are the seed's table. */
    metrics: MetricsSettingsSchema,
    /** Audit reviews (seed 000 §6): reviewers, their keys, the spot-check share. */
    reviews: ReviewSettingsSchema,
    /** Capability tokens (seed 000 §8): the keys that may issue them, and how long one lives. */
    capabilities: CapabilitySettingsSchema,
    /** The MCP judge proxy: which tool calls are judged as what (`agent-judge mcp`, docs/mcp.md). */
    mcp: McpSettingsSchema,
    /** Coding agents' built-in tools through their hooks: rules per runtime, shell and file checks (docs/hooks.md). */
    hooks: HooksSettingsSchema,
    /** Scoped grants: which tiers an approver may grant, for how long and how many uses at most. */
    grants: GrantSettingsSchema,
    /** Model-backed judge settings (see the judge docs); optional so the rules judge runs alone. */
    judge: JudgeSettingsSchema.optional(),
    /** Which sources are untrusted and which tainted calls never pass on rules alone (docs/provenance.md). */
    provenance: ProvenanceSettingsSchema,
  }),
});
export type CompliancePolicy = z.infer<typeof CompliancePolicySchema>;

/** The executor's heartbeat timeout; workflow code imports it from `./execution-timeout`, which builds no schema. */
export { executionHeartbeatTimeoutMs } from './execution-timeout';
