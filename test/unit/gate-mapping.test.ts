/**
 * The gate's pure part: how a call of any runtime becomes a proposal, and how the proposal is named.
 */
import { describe, expect, it } from 'vitest';
import { mapToolCall, proposalForToolCall, toolCallDigest, type GateToolCall } from '../../src/gate';
import { proposalSessionId } from '../../src/gate/mapping';
import { proposalWorkflowId } from '../../src/contracts/digest';
import { McpRuleSchema } from '../../src/contracts/mcp';
import { PROPOSAL_ID_RE, workflowIdNamedBy } from '../../src/contracts/workflow-ids';
import { callDigest } from '../../src/mcp/tools';

const rules = { rules: [McpRuleSchema.parse({ tool: 'read', tier: 'no-judge' })] };
const call = (runtime: string, args: Record<string, unknown> = { path: 'a' }): GateToolCall => ({
  runtime,
  server: 'builtin',
  tool: 'bash',
  arguments: args,
});

function proposalOf(c: GateToolCall, sequence = 0) {
  const mapping = mapToolCall(rules, c);
  if (mapping.kind !== 'judged') throw new Error('expected judged');
  const r = proposalForToolCall({
    agentId: '@a',
    call: c,
    callDigest: toolCallDigest(c),
    mapping,
    agent: {},
    sequence,
  });
  if (!r.ok) throw new Error(r.refusal.reason);
  return r.value;
}

describe('gate mapping and names', () => {
  it('names a non-MCP call call-<32 hex>, derived from its workflow id and found without a lookup', () => {
    const p = proposalOf(call('claude-code'));
    expect(p.proposal_id).toMatch(/^call-[0-9a-f]{32}$/);
    expect(PROPOSAL_ID_RE.test(p.proposal_id)).toBe(true);
    expect(workflowIdNamedBy(p.proposal_id)).toBe(proposalWorkflowId(p));
    expect(p.performer).toMatchObject({ by: 'caller', runtime: 'claude-code', server: 'builtin', tool: 'bash' });
    // No tool definition to hash: none is recorded; the unmapped call is a tool_call (it did not come through MCP).
    expect(p).toMatchObject({ action_type: 'tool_call', parameters: { arguments: { path: 'a' } } });
    expect(p.parameters).not.toHaveProperty('tool_definition_hash');
  });

  it('keeps mcp-<32 hex> and the MCP call digest for the MCP runtime', () => {
    const mcp = { ...call('mcp'), toolDefinitionHash: '0'.repeat(64) };
    expect(proposalOf(mcp).proposal_id).toMatch(/^mcp-[0-9a-f]{32}$/);
    expect(proposalOf(mcp).performer).not.toHaveProperty('runtime');
    expect(toolCallDigest(mcp)).toBe(
      callDigest({ server: 'builtin', tool: 'bash', toolDefinitionHash: '0'.repeat(64), arguments: { path: 'a' } }),
    );
  });

  it('the runtime is part of the call: the same tool and arguments from two runtimes are two proposals', () => {
    expect(toolCallDigest(call('codex'))).not.toBe(toolCallDigest(call('gemini')));
    expect(proposalWorkflowId(proposalOf(call('codex')))).not.toBe(proposalWorkflowId(proposalOf(call('gemini'))));
    expect(proposalWorkflowId(proposalOf(call('codex'), 1))).not.toBe(proposalWorkflowId(proposalOf(call('codex'))));
  });

  it("the runtime's session id is the proposal's session_id and part of its identity, not of the call digest", () => {
    const inA = { ...call('claude-code'), session: { sessionId: 'sess-a', callId: 'c1' } };
    const inB = { ...call('claude-code'), session: { sessionId: 'sess-b', callId: 'c1' } };
    const a = proposalOf(inA);
    const b = proposalOf(inB);
    expect(a.session_id).toBe('sess-a');
    expect(b.session_id).toBe('sess-b');
    expect(toolCallDigest(inA)).toBe(toolCallDigest(inB));
    expect(a.proposal_id).not.toBe(b.proposal_id);
    expect(proposalWorkflowId(a)).not.toBe(proposalWorkflowId(b));
    // Without a session the proposal is named exactly as before the field existed.
    const none = proposalOf(call('claude-code'));
    expect(none.session_id).toBeUndefined();
    expect(proposalOf({ ...call('claude-code'), session: { callId: 'c1' } }).proposal_id).toBe(none.proposal_id);
    expect(proposalOf({ ...call('claude-code'), session: { sessionId: 'sess-a', callId: 'c2' } }).proposal_id).toBe(
      a.proposal_id,
    );
  });

  it('a session id outside the safe form is carried as its digest: the calls still run, one value per session', () => {
    const proposalIn = (sessionId: string) => proposalOf({ ...call('openclaw'), session: { sessionId } });
    const odd = proposalIn('agent:main/chat "x" ' + 'k'.repeat(900));
    expect(odd.session_id).toMatch(/^sha256:[0-9a-f]{40}$/);
    expect(proposalIn('agent:main/chat "x" ' + 'k'.repeat(900)).session_id).toBe(odd.session_id);
    expect(proposalIn('agent:main/chat "y" ' + 'k'.repeat(900)).session_id).not.toBe(odd.session_id);
    expect(proposalSessionId('0b9c2f4e-1d2a-4c3b-9e8f-7a6b5c4d3e2f')).toBe('0b9c2f4e-1d2a-4c3b-9e8f-7a6b5c4d3e2f');
  });

  it('a no-judge rule maps to no proposal', () => {
    expect(mapToolCall(rules, { ...call('codex'), tool: 'read' })).toMatchObject({ kind: 'no-judge' });
  });
});
