/**
 * From a `tools/call` to what happens to it: the first `spec.mcp` rule whose server and tool globs match decides
 * (no-judge, or an action type with target and parameters read from the arguments); no rule makes an
 * `mcp_tool_call`, which a person decides by default. A mapped call must pass its action type's strict proposal
 * schema; any mapping error denies the call.
 */
import { applyTemplate, globMatches, MCP_TOOL_CALL, type McpRule, type McpSettings } from '../contracts/mcp';
import { proposalWorkflowId, PROPOSAL_WORKFLOW_ID_PREFIX } from '../contracts/digest';
import { safeParseProposal, type Proposal } from '../contracts/proposal';
import type { AgentJudgeArgument } from './tools';

export interface ToolCall {
  server: string;
  tool: string;
  toolDefinitionHash: string;
  /** The arguments as they go upstream (without `_agent_judge`). */
  arguments: Record<string, unknown>;
}

/** Where a rule sits and what it is called, for verdicts and audit lines. */
export interface MatchedRule {
  name: string;
  rule: McpRule | null;
}

export type CallMapping =
  | { kind: 'no-judge'; rule: MatchedRule }
  | {
      kind: 'judged';
      rule: MatchedRule;
      actionType: string;
      target: Record<string, unknown>;
      parameters: Record<string, unknown>;
    }
  | { kind: 'error'; rule: MatchedRule; message: string };

/** The first rule matching server and tool, or null (the call becomes an `mcp_tool_call`). */
export function matchRule(settings: McpSettings, server: string, tool: string): MatchedRule | null {
  for (const [i, rule] of settings.rules.entries()) {
    if (rule.server !== undefined && !globMatches(rule.server, server)) continue;
    if (!globMatches(rule.tool, tool)) continue;
    return { name: rule.name ?? `mcp.rules[${i}]`, rule };
  }
  return null;
}

/** What the policy makes of this call. */
export function mapCall(settings: McpSettings, call: ToolCall): CallMapping {
  const matched = matchRule(settings, call.server, call.tool);
  if (!matched?.rule) {
    return {
      kind: 'judged',
      rule: { name: 'unmapped', rule: null },
      actionType: MCP_TOOL_CALL,
      target: { server: call.server, tool: call.tool },
      parameters: { arguments: call.arguments, tool_definition_hash: call.toolDefinitionHash },
    };
  }
  const { rule } = matched;
  if (rule.tier === 'no-judge') return { kind: 'no-judge', rule: matched };
  try {
    return {
      kind: 'judged',
      rule: matched,
      actionType: rule.actionType as string,
      target: applyTemplate(rule.target ?? {}, call.arguments, 'target') as Record<string, unknown>,
      parameters: applyTemplate(rule.parameters ?? {}, call.arguments, 'parameters') as Record<string, unknown>,
    };
  } catch (err) {
    return { kind: 'error', rule: matched, message: (err as Error).message };
  }
}

/**
 * The proposal for a judged call, `sequence` identical calls after the first. Its proposal_id is derived from its
 * workflow id, so the identical call re-issued names the same proposal; returns the schema's refusal otherwise.
 */
export function proposalForCall(input: {
  agentId: string;
  call: ToolCall;
  callDigest: string;
  mapping: Extract<CallMapping, { kind: 'judged' }>;
  agentJudge: AgentJudgeArgument;
  sequence: number;
}): { ok: true; proposal: Proposal } | { ok: false; error: string } {
  const { call, mapping, agentJudge } = input;
  const draft = {
    proposal_id: 'mcp-pending',
    agent_id: input.agentId,
    action_type: mapping.actionType,
    target: mapping.target,
    parameters: mapping.parameters,
    justification:
      agentJudge.justification ??
      `MCP tool call ${call.server}/${call.tool}; the agent gave no justification (_agent_judge.justification)`,
    cited_evidence: agentJudge.cited_evidence ?? [],
    scope_claim: agentJudge.scope_claim ?? {},
    performer: {
      by: 'caller',
      call: input.callDigest,
      sequence: input.sequence,
      server: call.server,
      tool: call.tool,
      tool_definition_hash: call.toolDefinitionHash,
      rule: mapping.rule.name,
    },
  };
  const parsed = safeParseProposal(draft);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const workflowId = proposalWorkflowId(parsed.value);
  return {
    ok: true,
    proposal: { ...parsed.value, proposal_id: `mcp-${workflowId.slice(PROPOSAL_WORKFLOW_ID_PREFIX.length)}` },
  };
}
