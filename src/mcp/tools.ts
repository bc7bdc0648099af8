/**
 * The proxy's edits to `tools/list` results and `tools/call` arguments: one optional `_agent_judge` property on
 * every tool's input schema (the agent's justification, evidence and scope, as in a proposal), removed again before
 * the call goes upstream. Everything else in a tool definition is kept as the upstream wrote it.
 */
import type { z } from 'zod';
import { sha256 } from '@noble/hashes/sha2.js';
import { canonicalJson } from '../contracts/canonical-json';
import { toHex, utf8 } from '../contracts/encoding';
import { AGENT_JUDGE_ARGUMENT } from '../contracts/mcp';
import { ClarificationFieldsSchema } from '../contracts/messages';
import { describeIssues } from '../contracts/zod-error';
import { BadInputError } from '../contracts/errors';

/** What an agent may say for itself under `_agent_judge`: the proposal fields an actor writes (a clarification's). */
export const AgentJudgeArgumentSchema = ClarificationFieldsSchema;
export type AgentJudgeArgument = z.infer<typeof AgentJudgeArgumentSchema>;

/** The JSON Schema added to every tool's input schema: short, so it costs the model few tokens. */
export const AGENT_JUDGE_PROPERTY = {
  type: 'object',
  description:
    'Optional, for agent-judge (which decides whether this call may run): why the call is needed ' +
    '(justification), evidence such as issue URLs (cited_evidence), and the scope you claim (scope_claim). ' +
    'Fill it in when a call was answered CLARIFY, then repeat the identical call.',
  properties: {
    justification: { type: 'string', minLength: 1, maxLength: 16384 },
    cited_evidence: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        properties: {
          type: { type: 'string' },
          url: { type: 'string' },
          source: { type: 'string' },
          title: { type: 'string' },
        },
        required: ['type'],
        additionalProperties: false,
      },
    },
    scope_claim: {
      type: 'object',
      properties: {
        files_only: { type: 'array', items: { type: 'string' } },
        max_lines: { type: 'integer', minimum: 0 },
        no_existing_code_deletion: { type: 'boolean' },
      },
      additionalProperties: false,
    },
  },
  additionalProperties: false,
} as const;

/** A tool definition as `tools/list` carries it (only the parts the proxy reads are typed). */
export interface ToolDefinition {
  name: string;
  inputSchema?: { type?: string; properties?: Record<string, unknown>; [k: string]: unknown };
  [k: string]: unknown;
}

/** SHA-256 of the canonical JSON of a tool's definition as the upstream listed it: a changed tool is a new call. */
export function toolDefinitionHash(tool: ToolDefinition): string {
  return toHex(sha256(utf8(canonicalJson(tool))));
}

/** A tool whose own input schema already has `_agent_judge`: the proxy cannot add its property without a clash. */
export class ToolNameCollisionError extends BadInputError {}

/** The tool with `_agent_judge` added to its input schema's properties; refuses a tool that already has one. */
export function augmentTool(tool: ToolDefinition): ToolDefinition {
  const schema = tool.inputSchema ?? { type: 'object' };
  const properties = schema.properties ?? {};
  if (Object.prototype.hasOwnProperty.call(properties, AGENT_JUDGE_ARGUMENT)) {
    throw new ToolNameCollisionError(
      `tool ${JSON.stringify(tool.name)}: its inputSchema already has a property ${AGENT_JUDGE_ARGUMENT}; ` +
        'agent-judge mcp cannot add its own (rename the upstream property)',
    );
  }
  return {
    ...tool,
    inputSchema: { ...schema, properties: { ...properties, [AGENT_JUDGE_ARGUMENT]: AGENT_JUDGE_PROPERTY } },
  };
}

/** A `tools/list` result with every tool augmented; everything else (nextCursor, _meta) kept. */
export function augmentToolsList(result: Record<string, unknown>): Record<string, unknown> {
  const tools = Array.isArray(result.tools) ? (result.tools as ToolDefinition[]) : [];
  return { ...result, tools: tools.map(augmentTool) };
}

/**
 * Splits a call's arguments into what goes upstream (without `_agent_judge`) and what the agent said for itself,
 * checked; a malformed `_agent_judge` is bad input naming the field.
 */
export function splitArguments(args: unknown): { upstream: Record<string, unknown>; agentJudge: AgentJudgeArgument } {
  const all =
    args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  const { [AGENT_JUDGE_ARGUMENT]: raw, ...upstream } = all;
  if (raw === undefined) return { upstream, agentJudge: {} };
  const parsed = AgentJudgeArgumentSchema.safeParse(raw);
  if (!parsed.success) throw new BadInputError(describeIssues(AGENT_JUDGE_ARGUMENT, parsed.error.issues));
  return { upstream, agentJudge: parsed.data };
}

/** The exact call, as proposals and (later) capability tokens bind it: tool, its definition hash, its arguments. */
export function callDigest(call: {
  server: string;
  tool: string;
  toolDefinitionHash: string;
  arguments: Record<string, unknown>;
}): string {
  return toHex(
    sha256(
      utf8(
        canonicalJson({
          server: call.server,
          tool: call.tool,
          tool_definition_hash: call.toolDefinitionHash,
          arguments: call.arguments,
        }),
      ),
    ),
  );
}
