/**
 * From a tool call to what happens to it: the first rule whose server and tool globs match decides (no-judge, or an
 * action type with target and parameters read from the arguments); no rule makes an `mcp_tool_call` (through MCP) or
 * a `tool_call` (anything else), which a person decides by default. A mapped call must pass its action type's strict
 * proposal schema; any mapping error refuses the call. Pure: no Temporal, no I/O.
 */
import type { ProposalProvenance } from '../contracts/provenance';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import { applyTemplate, globMatches, MCP_TOOL_CALL, TOOL_CALL, templateReads, type McpRule } from '../contracts/mcp';
import { proposalWorkflowId, PROPOSAL_WORKFLOW_ID_PREFIX } from '../contracts/digest';
import {
  actionShapes,
  isKnownActionType,
  safeParseProposal,
  SessionIdSchema,
  USER_TASK_MAX_CHARS,
  type Proposal,
} from '../contracts/proposal';
import { refusal, type Checked, type Refusal } from '../contracts/refusal';
import { callProposalIdPrefix } from '../contracts/workflow-ids';
import type { AgentStatement, GateRules, GateToolCall } from './types';

/** Where a rule sits and what it is called, for verdicts and audit lines. */
export interface MatchedRule {
  name: string;
  rule: McpRule | null;
}

/** What the rules make of one call. */
export type CallMapping =
  | { kind: 'no-judge'; rule: MatchedRule }
  | {
      kind: 'judged';
      rule: MatchedRule;
      actionType: string;
      target: Record<string, unknown>;
      parameters: Record<string, unknown>;
    }
  /**
   * Refused before any proposal: the rule cannot map the call (`rule.unmappable`), or a runtime's own completion
   * (src/hooks/) refuses it, its refusal naming which of its rules and why.
   */
  | { kind: 'refused'; rule: MatchedRule; refusal: Refusal };

/** What a call no rule maps becomes: an `mcp_tool_call` through the MCP proxy, a `tool_call` through anything else. */
export function unmappedActionType(runtime: string): string {
  return runtime === 'mcp' ? MCP_TOOL_CALL : TOOL_CALL;
}

/** The first rule matching server and tool, or null (the call becomes an unmapped tool call). */
export function matchRule(rules: GateRules, server: string, tool: string): MatchedRule | null {
  for (const [i, rule] of rules.rules.entries()) {
    if (rule.server !== undefined && !globMatches(rule.server, server)) continue;
    if (!globMatches(rule.tool, tool)) continue;
    return { name: rule.name ?? `mcp.rules[${i}]`, rule };
  }
  return null;
}

/** What the rules make of this call (only its server, tool, definition hash and arguments count). */
export function mapToolCall(
  rules: GateRules,
  call: Pick<GateToolCall, 'runtime' | 'server' | 'tool' | 'toolDefinitionHash' | 'arguments'>,
): CallMapping {
  const matched = matchRule(rules, call.server, call.tool);
  if (!matched?.rule) {
    return {
      kind: 'judged',
      rule: { name: 'unmapped', rule: null },
      actionType: unmappedActionType(call.runtime),
      target: { server: call.server, tool: call.tool },
      parameters: {
        arguments: call.arguments,
        ...(call.toolDefinitionHash !== undefined ? { tool_definition_hash: call.toolDefinitionHash } : {}),
      },
    };
  }
  const { rule } = matched;
  if (rule.tier === 'no-judge') return { kind: 'no-judge', rule: matched };
  const actionType = rule.actionType as string;
  let target: Record<string, unknown>;
  let parameters: Record<string, unknown>;
  try {
    target = applyTemplate(rule.target ?? {}, call.arguments, 'target') as Record<string, unknown>;
    parameters = applyTemplate(rule.parameters ?? {}, call.arguments, 'parameters') as Record<string, unknown>;
  } catch (err) {
    return unmappable(matched, (err as Error).message);
  }
  const unmapped = unmappedInput(rule, call.arguments);
  if (unmapped === null) return { kind: 'judged', rule: matched, actionType, target, parameters };
  const [first] = Object.keys(unmapped);
  if (rule.unmappedInput === 'refuse' || !carriesUnmapped(actionType)) {
    const why =
      rule.unmappedInput === 'refuse'
        ? 'the rule refuses input it does not map (unmappedInput: refuse)'
        : `action type ${actionType} cannot carry it in parameters.unmapped_input`;
    return {
      kind: 'refused',
      rule: matched,
      refusal: refusal(
        'rule.unmapped-input',
        `rule ${matched.name} does not read the input field ${JSON.stringify(first)}, and ${why}: the approver ` +
          `would not see it. Map it in the rule's target or parameters, or list it in ignore if it changes nothing`,
      ),
    };
  }
  return { kind: 'judged', rule: matched, actionType, target, parameters: { ...parameters, unmapped_input: unmapped } };
}

/**
 * The top-level input fields `rule`'s templates do not read and it does not `ignore`, verbatim, or null when there
 * are none. The runtime performs the whole input: a field no template reads (Claude Code's
 * `dangerouslyDisableSandbox`, `run_in_background`) would otherwise run unseen by the judge and the approver.
 */
export function unmappedInput(rule: McpRule, args: Record<string, unknown>): Record<string, unknown> | null {
  const reads = templateReads([rule.target ?? {}, rule.parameters ?? {}]);
  if (reads === 'all') return null;
  const ignored = new Set(rule.ignore ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (!reads.has(key) && !ignored.has(key)) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** Whether a proposal of `actionType` can carry unmapped input: its parameters have `unmapped_input`, or no shape. */
function carriesUnmapped(actionType: string): boolean {
  if (!isKnownActionType(actionType)) return true;
  return 'unmapped_input' in (actionShapes[actionType].parameters.shape as Record<string, unknown>);
}

/** True when a judged mapping carries input its rule does not map: such a call never runs without a proposal. */
export function carriesUnmappedInput(mapping: CallMapping): boolean {
  return mapping.kind === 'judged' && mapping.parameters.unmapped_input !== undefined;
}

/** A call `rule` cannot map (an argument its template reads is missing, say): refused, never judged. */
export function unmappable(rule: MatchedRule, why: string): CallMapping {
  return {
    kind: 'refused',
    rule,
    refusal: refusal('rule.unmappable', `rule ${rule.name} cannot map this call: ${why}`),
  };
}

/**
 * The identity of one exact call, as its proposal's `performer.call`: SHA-256 over the canonical JSON of its server,
 * tool, definition hash and arguments, plus the runtime for every runtime but MCP (the MCP proxy's calls keep the form
 * they always had) and the working directory when the runtime gives one.
 */
export function toolCallDigest(
  call: Pick<GateToolCall, 'runtime' | 'server' | 'tool' | 'toolDefinitionHash' | 'arguments' | 'cwd'>,
): string {
  return toHex(
    sha256(
      utf8(
        canonicalJson({
          ...(call.runtime !== 'mcp' ? { runtime: call.runtime } : {}),
          ...(call.cwd !== undefined ? { cwd: call.cwd } : {}),
          server: call.server,
          tool: call.tool,
          ...(call.toolDefinitionHash !== undefined ? { tool_definition_hash: call.toolDefinitionHash } : {}),
          arguments: call.arguments,
        }),
      ),
    ),
  );
}

/**
 * A runtime's session id as the proposal carries it: the id itself when it is a {@link SessionIdSchema} session id
 * (Claude Code, Codex and Gemini CLI give UUIDs), else `sha256:` and the first 40 hex digits of its SHA-256 (an
 * OpenClaw session key may be 1,024 characters of any kind). The same session always gives the same value, and an
 * unusual id never refuses the runtime's calls.
 */
export function proposalSessionId(sessionId: string): string {
  return SessionIdSchema.safeParse(sessionId).success
    ? sessionId
    : `sha256:${toHex(sha256(utf8(sessionId))).slice(0, 40)}`;
}

/**
 * The proposal for a judged call, `sequence` identical calls after the first. Its proposal_id is derived from its
 * workflow id (`mcp-<32 hex>` for MCP, `call-<32 hex>` for any other runtime), so the identical call re-issued names
 * the same proposal; returns the schema's refusal otherwise. The runtime's session id, when it gives one, becomes the
 * proposal's `session_id` (part of its identity: the identical call in another session is another proposal).
 */
export function proposalForToolCall(input: {
  agentId: string;
  call: Pick<GateToolCall, 'runtime' | 'server' | 'tool' | 'toolDefinitionHash' | 'userTask' | 'session'>;
  callDigest: string;
  mapping: Extract<CallMapping, { kind: 'judged' }>;
  agent: AgentStatement;
  sequence: number;
  /** The taints of the call's arguments (src/gate/provenance.ts), when it is tainted. */
  provenance?: ProposalProvenance;
}): Checked<Proposal> {
  const { call, mapping, agent } = input;
  const prefix = callProposalIdPrefix(call.runtime);
  const what = call.runtime === 'mcp' ? 'MCP tool call' : `${call.runtime} tool call`;
  const draft = {
    proposal_id: `${prefix}pending`,
    agent_id: input.agentId,
    action_type: mapping.actionType,
    target: mapping.target,
    parameters: mapping.parameters,
    justification:
      agent.justification ??
      `${what} ${call.server}/${call.tool}; the agent gave no justification (_agent_judge.justification)`,
    cited_evidence: agent.cited_evidence ?? [],
    scope_claim: agent.scope_claim ?? {},
    ...userTaskField(call.userTask),
    // The runtime's session, so a grant can be scoped to it (docs/grants.md).
    ...(call.session?.sessionId ? { session_id: proposalSessionId(call.session.sessionId) } : {}),
    ...(input.provenance ? { provenance: input.provenance } : {}),
    performer: {
      by: 'caller',
      call: input.callDigest,
      sequence: input.sequence,
      server: call.server,
      tool: call.tool,
      ...(call.toolDefinitionHash !== undefined ? { tool_definition_hash: call.toolDefinitionHash } : {}),
      rule: mapping.rule.name,
      ...(call.runtime !== 'mcp' ? { runtime: call.runtime } : {}),
    },
  };
  const parsed = safeParseProposal(draft);
  if (!parsed.ok) return parsed;
  const workflowId = proposalWorkflowId(parsed.value);
  return {
    ok: true,
    value: { ...parsed.value, proposal_id: `${prefix}${workflowId.slice(PROPOSAL_WORKFLOW_ID_PREFIX.length)}` },
  };
}

/**
 * The proposal's `user_task` from a runtime's `userTask`: what the user asked travels to the judge as untrusted
 * context. Cut to the field's limit (a visible ellipsis), so a long first message still makes a valid proposal.
 */
export function userTaskField(task: string | undefined): { user_task?: string } {
  if (task === undefined || task.trim() === '') return {};
  return { user_task: task.length > USER_TASK_MAX_CHARS ? `${task.slice(0, USER_TASK_MAX_CHARS - 1)}…` : task };
}
