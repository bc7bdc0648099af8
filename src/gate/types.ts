/**
 * The gate's public types (`agent-judge/gate`): what a runtime hands the gate for one tool call, and the answers it
 * gets back. Answers are data, never a runtime's format: the MCP proxy renders them as MCP tool results, a coding
 * agent's hook as its hook protocol's decision. docs/gate.md is the contract for adapter authors.
 */
import type { Client } from '@temporalio/client';
import type { SubmissionLimits } from '../client/limits';
import type { Clarification } from '../contracts/messages';
import type { McpRule } from '../contracts/mcp';
import type { ProposalRecord } from '../contracts/status';
import type { Verdict } from '../contracts/verdict';
import type { CallMapping } from './mapping';
import type { ActionChange } from '../contracts/action-edit';
import type { GateProvenance } from './provenance';

/** What the agent may say for itself with a call (all optional): the proposal's justification, evidence and scope. */
export type AgentStatement = Partial<Clarification>;

/** One tool call, as any runtime sees it. */
export interface GateToolCall {
  /**
   * The runtime the call comes from: `mcp` (the MCP proxy), `claude-code`, `codex`, `gemini`, `openclaw`... Part of the
   * call's identity: the same tool and arguments from two runtimes are two proposals.
   */
  runtime: string;
  /** The server or namespace the tool belongs to (the MCP server's name; a hook's tool family, e.g. `builtin`). */
  server: string;
  tool: string;
  /** SHA-256 (64 hex) of the tool's definition when the runtime has one (MCP `tools/list`); otherwise absent. */
  toolDefinitionHash?: string;
  /** The arguments exactly as the tool will receive them. */
  arguments: Record<string, unknown>;
  /**
   * The directory the call acts in, when the runtime says (a hook's `cwd`): part of the call's identity, since the
   * same command in two directories is two actions. Absent for MCP.
   */
  cwd?: string;
  /** The agent's own justification, evidence and scope, when the runtime lets it supply them. */
  agent?: AgentStatement;
  /**
   * What the user asked the agent to do, as the runtime saw it (e.g. a session's first user message): untrusted
   * context for the judge, never part of the call's identity. Carried as the proposal's `user_task` when the
   * proposal contract has that field (see `proposalForToolCall`).
   */
  userTask?: string;
  /**
   * The runtime's session and call ids. The session id becomes the proposal's `session_id` (what a session-scoped
   * grant binds; it makes the identical call in another session another proposal), but never part of `performer.call`;
   * the call id is audit only (the adapter's own log line carries it).
   */
  session?: { sessionId?: string; callId?: string };
}

/**
 * How calls become proposals: the first rule whose server and tool globs match decides (no-judge, or an action type
 * with target and parameters read from the arguments); no rule makes an unmapped tool call (`mcp_tool_call` through
 * MCP, `tool_call` otherwise), which a person decides by default. The rule sets are the policy's: `spec.mcp` for the
 * MCP proxy and the gate service's `/v1/calls`, `spec.hooks.<runtime>` for each coding agent's hooks.
 */
export interface GateRules {
  rules: readonly McpRule[];
}

/** Who performs approved calls: the one identity an approval is leased to. */
export interface GatePerformer {
  /** The agent the proposals are made for (`agent_id`). */
  agentId: string;
  /** The redeemer name the approval is leased to: `mcp-proxy`, `hook:claude-code`... (at most 256 characters). */
  redeemer: string;
}

export interface GateOptions {
  /** A connected Temporal client (see `connectClient` in `agent-judge/client`). */
  client: Client;
  /** The proposal workflow's task queue (default `agent-judge`). */
  taskQueue?: string;
  /** The per-agent limits each proposal is held to (src/client/limits.ts); a refusal answers `refused`, naming it. */
  limits?: SubmissionLimits;
  rules: GateRules;
  performer: GatePerformer;
  /** How long one call is held while a judge or a person decides before it is answered `pending` (ms). */
  holdMs: number;
  /** How often a held call looks at its proposal again while a person decides (ms, default 250). */
  pollMs?: number;
  /**
   * How soon after a call its decision must come for the Update that waits for it to lease the approval at once (ms,
   * default 2000). A later decision is leased by one Update more. Longer suits a loaded cluster whose judge is slow to
   * start; shorter keeps rare the approval leased to a performer that then dies ("forwarded, no outcome").
   */
  leaseWindowMs?: number;
  /**
   * A runtime's own completion of what the rules made of a call, before any proposal: fill in what the arguments do
   * not say (a working directory, a parsed shell line, resolved paths), run a call at once (`no-judge`), or refuse
   * it (`refuse`). Pure or cheap; an exception refuses the call.
   */
  refine?: (mapping: CallMapping, call: GateToolCall) => CallMapping | Promise<CallMapping>;
  /**
   * Whether the runtime can perform a call with other arguments than it sent (default true). A runtime that cannot
   * (Codex's and Gemini CLI's hooks change no tool input) gets `refused` for a call a person approved only with edits:
   * the gate records it not performed, so the unedited call never runs.
   */
  appliesEdits?: boolean;
  /**
   * Provenance through sessions (docs/provenance.md): results recorded with `recordResult`, a consequential call's
   * proposal given the taints of its arguments. One per process, shared by every gate; absent, no call is tainted.
   */
  provenance?: GateProvenance;
}

/** Per call: cancellation and progress. */
export interface DecideOptions {
  /** Aborting answers `cancelled`; an approval already leased is then reported not performed. */
  signal?: AbortSignal;
  /** Called about once a second while the call is held (for progress notifications). */
  onHeld?: () => void;
  /** Hold this call at most this long (ms) before answering `pending`: never longer than the gate's own hold. */
  holdMs?: number;
  /**
   * Called once the call's own proposal is known (started now, or the identical call's open one found), before the gate
   * follows it: a runtime that answers at once with a handle (MCP Tasks) takes its workflow id and sequence here.
   * Returning `false` for a proposal this call did not start (one the runtime already follows for another call)
   * answers `cancelled` at once: nothing is followed or leased.
   */
  onProposal?: (p: { workflowId: string; proposalId: string; sequence: number }) => boolean | void;
  /**
   * Resolve against this sequence's proposal only (a call taken up again, e.g. an MCP task after a restart): when it
   * is finished, the answer is `refused`, never a new proposal.
   */
  sequence?: number;
}

/** The proposal an answer is about. */
export interface ProposalRef {
  proposalId: string;
  workflowId: string;
  /** The latest verdict (null while none). */
  verdict: Verdict | null;
}

/**
 * What the performer tells the proposal after it acted: `ok`, `tool_error` (the tool ran and answered an error),
 * `unknown` (the tool ran, and the runtime's report does not say whether it succeeded: a command's output without its
 * exit code), `performer_failure` (the performer or the tool failed: it may not have run), `not_performed` (the lease
 * is given back unused: the call never reached the tool). One report per lease.
 */
export type GateOutcome = 'ok' | 'tool_error' | 'unknown' | 'performer_failure' | 'not_performed';

/**
 * What a performer holds of an approval: which proposal, the edits a person made, and the one report. This is all a
 * framework adapter needs, whether the gate runs in its process or behind the gate service (`remoteGate`).
 */
export interface PerformerLease extends ProposalRef {
  /**
   * Set when a person approved the call with edits (docs/edits.md): perform it with exactly these arguments (the
   * token was redeemed for them; the forward's `arguments` are these), never the ones the agent sent, and tell the
   * agent `changes`.
   */
  edited: { arguments: Record<string, unknown>; changes: ActionChange[] } | null;
  /**
   * Records what happened on the proposal (the run then closes). Resolves once recorded; rejects when agent-judge
   * cannot be reached (the proposal's deadline then records "forwarded, no outcome"). Call it exactly once.
   */
  report(outcome: GateOutcome, detail?: string): Promise<void>;
}

/** An approval leased to exactly one performer and one performance of exactly this call. */
export interface Lease extends PerformerLease {
  /** The redeemer the approval was leased to (this gate's performer). */
  performer: string;
  /** The proposal's status when it was leased. */
  status: ProposalRecord;
}

/** The gate's answer for one call (`L`: what a forward's lease is; the in-process gate gives a full {@link Lease}). */
export type GateAnswer<L extends PerformerLease = Lease> =
  /**
   * Perform the call now. With a lease: exactly once, then `lease.report(...)`. With `lease: null`: the policy needs
   * no proposal for it (a no-judge rule); nothing to report (the runtime keeps its own audit line).
   */
  | {
      kind: 'forward';
      rule: string;
      lease: L | null;
      /**
       * Exactly what to perform: the call's own arguments, or the edited ones when a person approved it with edits
       * (`lease.edited`). A performer performs these and nothing else, so no adapter can run the unedited call by
       * forgetting a field.
       */
      arguments: Record<string, unknown>;
    }
  /** Do not perform it. `recorded`: decided before, not judged again by this call. Final: the identical call is too. */
  | ({ kind: 'deny'; reason: string; recorded: boolean; final: true } & ProposalRef)
  /** Not performed: the judge needs more. Repeat the identical call with `agent` filled in. */
  | ({ kind: 'clarify'; reason: string; roundsLeft: number; deadline: string | null } & ProposalRef)
  /** Not performed yet: still being decided. Repeat the identical call after `retryAfterMs` or the decision. */
  | ({
      kind: 'pending';
      waitingFor: 'judge' | 'human';
      /** The proposal's outcome status (`pending`, `awaiting_human`, ...). */
      status: string;
      deadline: string | null;
      retryAfterMs: number;
    } & ProposalRef)
  /**
   * Not performed, and no verdict of its own: bad input, a mapping error, an unknown tool, agent-judge unreachable, an
   * approval this performer could not lease. `proposal` when one is concerned.
   */
  | { kind: 'refused'; reason: string; proposal: ProposalRef | null }
  /** The runtime cancelled the call (`signal`): nothing to answer. */
  | { kind: 'cancelled' };

/**
 * Anything that decides calls for a performer: the in-process {@link Gate} (the MCP proxy, the gate service itself)
 * or the gate service over HTTP (`remoteGate({ url, token })`, what agents and framework adapters use).
 */
export interface CallGate {
  decide(call: GateToolCall, opts?: DecideOptions): Promise<GateAnswer<PerformerLease>>;
}
