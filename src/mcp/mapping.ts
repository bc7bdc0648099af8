/**
 * The MCP proxy's view of the gate's mapping (src/gate/mapping.ts): a `tools/call` of the upstream named `server`,
 * mapped by the policy's `spec.mcp` rules, to an `mcp-<32 hex>` proposal.
 */
import type { McpSettings } from '../contracts/mcp';
import type { Proposal } from '../contracts/proposal';
import type { Checked } from '../contracts/refusal';
import { mapToolCall, matchRule as matchGateRule, proposalForToolCall, type CallMapping } from '../gate/mapping';
import type { AgentJudgeArgument } from './tools';

export type { CallMapping, MatchedRule } from '../gate/mapping';

/** The runtime name MCP calls carry through the gate. */
export const MCP_RUNTIME = 'mcp';
/** The redeemer MCP proxy approvals are leased to. */
export const MCP_REDEEMER = 'mcp-proxy';

export interface ToolCall {
  server: string;
  tool: string;
  toolDefinitionHash: string;
  /** The arguments as they go upstream (without `_agent_judge`). */
  arguments: Record<string, unknown>;
}

/** The first rule matching server and tool, or null (the call becomes an `mcp_tool_call`). */
export function matchRule(settings: McpSettings, server: string, tool: string) {
  return matchGateRule(settings, server, tool);
}

/** What the policy makes of this call. */
export function mapCall(settings: McpSettings, call: ToolCall): CallMapping {
  return mapToolCall(settings, { ...call, runtime: MCP_RUNTIME });
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
}): Checked<Proposal> {
  return proposalForToolCall({
    agentId: input.agentId,
    call: { ...input.call, runtime: MCP_RUNTIME },
    callDigest: input.callDigest,
    mapping: input.mapping,
    agent: input.agentJudge,
    sequence: input.sequence,
  });
}
