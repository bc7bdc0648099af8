/**
 * Provenance on the wire: what a proposal records about values that came from untrusted content (which argument,
 * which value, from where), and the policy's `spec.provenance` (which sources are untrusted, which action types a
 * tainted call may not take on rules alone). docs/provenance.md.
 */
import { z } from 'zod';

const VALUE_KINDS = [
  'email',
  'iban',
  'url',
  'host',
  'path',
  'command',
  'number',
  'identifier',
  'name',
  'quoted',
] as const;
/**
 * The kinds that taint by default: addresses, accounts, places and commands. Names (two capitalised words or more) and
 * quoted values (compared with whole arguments) catch more injections and hold many more legitimate calls
 * (docs/provenance.md has the AgentDojo figures for both).
 */
export const DEFAULT_VALUE_KINDS: Array<(typeof VALUE_KINDS)[number]> = VALUE_KINDS.filter(
  (k) => k !== 'name' && k !== 'quoted',
);

/** One argument of a call carrying a value that first entered the session from untrusted content. */
export const TaintSchema = z.strictObject({
  argument: z.string().min(1).max(300),
  kind: z.enum(VALUE_KINDS),
  value: z.string().min(1).max(256),
  /** Where the value entered the session: `mcp:<server>/<tool>`, `<runtime>:<tool>`, `a2a:<peer>`. */
  source: z.string().min(1).max(200),
});
export type TaintRecord = z.infer<typeof TaintSchema>;

/** Taints a proposal carries at most (the first ones found; `taints_total` says how many there were). */
export const MAX_PROPOSAL_TAINTS = 16;

/**
 * A proposal's provenance, set by the gate for a consequential call of a session that read untrusted content. Shown to
 * the judge as data and to people in disputes; a proposal with taints never passes on rules alone.
 */
export const ProposalProvenanceSchema = z.strictObject({
  taints: z.array(TaintSchema).max(MAX_PROPOSAL_TAINTS),
  taints_total: z.int().min(0).max(1_000_000),
  /** Injection-scan hits in the session's untrusted results before this call (tool-result scanning). */
  scan_hits: z
    .array(z.strictObject({ source: z.string().min(1).max(200), marker: z.string().min(1).max(64) }))
    .max(8)
    .default([]),
});
export type ProposalProvenance = z.infer<typeof ProposalProvenanceSchema>;

/** A glob over `<runtime>:<server>/<tool>` (`*`: any run of characters), e.g. `claude-code:builtin/WebFetch`. */
const SourceGlob = z.string().min(1).max(300);

/** Action types a tainted call of which never passes on rules alone, by default: it sends, pays, runs or publishes. */
export const DEFAULT_CONSEQUENTIAL = [
  'issue_comment',
  'discord_message',
  'forgejo_pr_create',
  'exec',
  'web_publish',
  'financial_op',
  'impersonation',
  'credential_rotation',
  'shell_command',
  'program_config_edit',
  'web_request',
  'web_request_sensitive',
  'mcp_tool_call',
  'tool_call',
];

/** Tool results that are untrusted by default: the web, inbound messages, and every MCP tool. */
export const DEFAULT_UNTRUSTED = [
  '*:*/WebFetch',
  '*:*/WebSearch',
  '*:*/web_fetch',
  '*:*/google_web_search',
  'mcp:*/*',
  'a2a:*',
];

export const ProvenanceSettingsSchema = z
  .strictObject({
    /** Off: no session records anything and no call is tainted. */
    enabled: z.boolean().default(true),
    /** Sources whose results are untrusted (globs over `<runtime>:<server>/<tool>`). */
    untrusted: z.array(SourceGlob).max(200).default(DEFAULT_UNTRUSTED),
    /** Exceptions to `untrusted`: these sources are trusted (an MCP server of the agent's own). */
    trusted: z.array(SourceGlob).max(200).default([]),
    /** Action types a tainted call of which goes to the judge with its provenance, and to a person without a model. */
    consequential: z
      .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/u, 'expected a snake_case action type'))
      .max(200)
      .default(DEFAULT_CONSEQUENTIAL),
    /** The kinds of value that taint a call (see DEFAULT_VALUE_KINDS). */
    kinds: z.array(z.enum(VALUE_KINDS)).min(1).default(DEFAULT_VALUE_KINDS),
  })
  .default({
    enabled: true,
    untrusted: DEFAULT_UNTRUSTED,
    trusted: [],
    consequential: DEFAULT_CONSEQUENTIAL,
    kinds: DEFAULT_VALUE_KINDS,
  });
export type ProvenanceSettings = z.infer<typeof ProvenanceSettingsSchema>;

/** One line naming what is tainted, for reasons and disputes (values quoted as data, at most three). */
export function describeTaints(p: Pick<ProposalProvenance, 'taints' | 'taints_total'>): string {
  const shown = p.taints
    .slice(0, 3)
    .map((t) => `${t.argument} carries ${t.kind} ${JSON.stringify(t.value.slice(0, 80))} from ${t.source}`);
  const more = p.taints_total > shown.length ? ` (and ${p.taints_total - shown.length} more)` : '';
  return `${shown.join('; ')}${more}`;
}
