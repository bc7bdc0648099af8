/**
 * Issue 10, the pure parts of the MCP proxy: the argument-path syntax, first-match mapping of tool calls to
 * proposals (and the mapping errors that deny), the `_agent_judge` schema augmentation, and the workflow state's
 * record of a call its caller performs.
 */
import { describe, expect, it } from 'vitest';
import {
  applyTemplate,
  globMatches,
  McpSettingsSchema,
  parseArgumentPath,
  readArgumentPath,
  type McpSettings,
} from '../../src/contracts/mcp';
import { CompliancePolicySchema } from '../../src/contracts/policy';
import { proposalWorkflowId } from '../../src/contracts/digest';
import { mapCall, proposalForCall, type ToolCall } from '../../src/mcp/mapping';
import {
  augmentTool,
  augmentToolsList,
  callDigest,
  splitArguments,
  toolDefinitionHash,
  ToolNameCollisionError,
} from '../../src/mcp/tools';
import { ProposalState } from '../../src/workflows/proposal/state';
import { jsonSchemaOf } from '../../src/cli/schema';
import { testPolicy } from '../helpers/system';

describe('argument paths', () => {
  it('reads $.a.b, $.a[0], $["odd key"] and $ itself', () => {
    const args = { a: { b: 'x', list: [10, 20] }, 'odd key': true };
    const read = (e: string) => {
      const p = parseArgumentPath(e);
      if (typeof p === 'string') throw new Error(p);
      return readArgumentPath(args, p);
    };
    expect(read('$.a.b')).toBe('x');
    expect(read('$.a.list[1]')).toBe(20);
    expect(read('$["odd key"]')).toBe(true);
    expect(read('$')).toEqual(args);
    expect(read('$.a.missing')).toBeUndefined();
    expect(read('$.a.list[5]')).toBeUndefined();
  });

  it('refuses anything else with the reason, and evaluates nothing', () => {
    expect(parseArgumentPath('$.a + 1')).toMatch(/unexpected/);
    expect(parseArgumentPath('$[a]')).toMatch(/expected \[number\] or \["key"\]/);
    expect(parseArgumentPath('$.')).toMatch(/expected a name/);
    expect(parseArgumentPath('$.constructor.constructor("return 1")()')).toMatch(/unexpected/);
    expect(parseArgumentPath('plain')).toMatch(/is not a path/);
  });

  it('own properties only: $.__proto__ and $.constructor find nothing', () => {
    const p = parseArgumentPath('$.constructor');
    const q = parseArgumentPath('$.__proto__');
    if (typeof p === 'string' || typeof q === 'string') throw new Error('expected paths');
    expect(readArgumentPath({}, p)).toBeUndefined();
    expect(readArgumentPath({}, q)).toBeUndefined();
  });

  it('templates: literals stay, $$ escapes, a missing required value names the field, $x? is left out', () => {
    const args = { path: '/w/a.txt', n: 3 };
    expect(applyTemplate({ path: '$.path', mode: 'overwrite', cost: '$$5', n: '$.n' }, args, 'target')).toEqual({
      path: '/w/a.txt',
      mode: 'overwrite',
      cost: '$5',
      n: 3,
    });
    expect(applyTemplate({ title: '$.title?' }, args, 'parameters')).toEqual({});
    expect(() => applyTemplate({ content: '$.content' }, args, 'parameters')).toThrow(
      'parameters.content: the call has no value at $.content',
    );
  });

  it('globs: * and ? only, everything else literal', () => {
    expect(globMatches('read_*', 'read_text_file')).toBe(true);
    expect(globMatches('read_*', 'write_file')).toBe(false);
    expect(globMatches('a.b', 'axb')).toBe(false);
    expect(globMatches('file?', 'files')).toBe(true);
  });
});

describe('spec.mcp in the policy', () => {
  it('defaults, and field-naming errors for a bad rule', () => {
    expect(McpSettingsSchema.parse(undefined)).toEqual({
      server: 'upstream',
      holdFor: '30s',
      performWithin: '10m',
      leaseWindow: '2s',
      rules: [],
      http: { agents: [], allowedHosts: [], allowedOrigins: [], sessionIdle: '30m' },
    });
    const bad = McpSettingsSchema.safeParse({
      rules: [{ tool: 'w', actionType: 'file_write', target: { path: '$.a[x]' } }],
    });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain('target.path: path \\"$.a[x]\\"');
    const both = McpSettingsSchema.safeParse({ rules: [{ tool: 'w', tier: 'no-judge', actionType: 'exec' }] });
    expect(both.error?.issues[0]?.message).toBe('a rule needs exactly one of tier: no-judge or actionType');
  });

  it('appears in `agent-judge schema policy`', () => {
    const schema = JSON.stringify(jsonSchemaOf('policy'));
    expect(schema).toContain('holdFor');
    expect(schema).toContain('performWithin');
    expect(CompliancePolicySchema.shape.spec.shape.mcp).toBeDefined();
  });

  it('the default policy sends mcp_tool_call to a person', () => {
    const policy = testPolicy('/tmp');
    expect(policy.spec.riskMatrix.find((r) => r.actionType === 'mcp_tool_call')?.tier).toBe('human-only');
  });
});

const settings: McpSettings = McpSettingsSchema.parse({
  server: 'fs',
  rules: [
    { name: 'fs.read', tool: 'read_*', tier: 'no-judge' },
    { name: 'other.server', server: 'git', tool: '*', tier: 'no-judge' },
    {
      name: 'fs.write',
      tool: 'write_file',
      actionType: 'file_write',
      target: { path: '$.path' },
      parameters: { content: '$.content', mode: 'overwrite' },
    },
  ],
});
const hash = 'b'.repeat(64);
const callOf = (tool: string, args: Record<string, unknown>, server = 'fs'): ToolCall => ({
  server,
  tool,
  toolDefinitionHash: hash,
  arguments: args,
});

describe('mapping a tools/call', () => {
  it('first match wins; a server glob limits a rule to its server', () => {
    expect(mapCall(settings, callOf('read_text_file', {}))).toMatchObject({
      kind: 'no-judge',
      rule: { name: 'fs.read' },
    });
    expect(mapCall(settings, callOf('anything', {}, 'git'))).toMatchObject({ kind: 'no-judge' });
    expect(mapCall(settings, callOf('anything', {}))).toMatchObject({ kind: 'judged', actionType: 'mcp_tool_call' });
  });

  it('an unmapped tool is an mcp_tool_call with the exact arguments and the definition hash', () => {
    expect(mapCall(settings, callOf('edit_file', { path: 'a' }))).toEqual({
      kind: 'judged',
      rule: { name: 'unmapped', rule: null },
      actionType: 'mcp_tool_call',
      target: { server: 'fs', tool: 'edit_file' },
      parameters: { arguments: { path: 'a' }, tool_definition_hash: hash },
    });
  });

  it('a mapped call must pass its action type schema; a missing argument denies', () => {
    const missing = mapCall(settings, callOf('write_file', { path: '/w/a' }));
    expect(missing).toEqual({
      kind: 'refused',
      rule: expect.objectContaining({ name: 'fs.write' }) as unknown,
      refusal: {
        code: 'rule.unmappable',
        reason: 'rule fs.write cannot map this call: parameters.content: the call has no value at $.content',
      },
    });
    const wrongType = mapCall(settings, callOf('write_file', { path: 7, content: 'x' }));
    if (wrongType.kind !== 'judged') throw new Error('expected judged');
    const p = proposalForCall({
      agentId: '@a',
      call: callOf('write_file', { path: 7, content: 'x' }),
      callDigest: 'c'.repeat(64),
      mapping: wrongType,
      agentJudge: {},
      sequence: 0,
    });
    expect(p).toMatchObject({
      ok: false,
      refusal: { code: 'bad-input', reason: expect.stringContaining('proposal.target.path') as unknown },
    });
  });

  it('the identical call names one proposal whatever it says for itself; a finished one moves the sequence', () => {
    const call = callOf('write_file', { path: '/w/a', content: 'x' });
    const mapping = mapCall(settings, call);
    if (mapping.kind !== 'judged') throw new Error('expected judged');
    const digest = callDigest(call);
    const at = (sequence: number, justification?: string) => {
      const r = proposalForCall({
        agentId: '@a',
        call,
        callDigest: digest,
        mapping,
        agentJudge: { justification },
        sequence,
      });
      if (!r.ok) throw new Error(r.refusal.reason);
      return r.value;
    };
    expect(proposalWorkflowId(at(0))).toBe(proposalWorkflowId(at(0, 'because')));
    expect(at(0).proposal_id).toBe(at(0, 'because').proposal_id);
    expect(at(0, 'because').justification).toBe('because');
    expect(proposalWorkflowId(at(1))).not.toBe(proposalWorkflowId(at(0)));
    // Another agent, or other arguments, is another proposal.
    const other = proposalForCall({ agentId: '@b', call, callDigest: digest, mapping, agentJudge: {}, sequence: 0 });
    expect(other.ok && proposalWorkflowId(other.value)).not.toBe(proposalWorkflowId(at(0)));
  });
});

describe('_agent_judge in tools/list and tools/call', () => {
  const tool = {
    name: 'write_file',
    description: 'Write a file',
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    annotations: { destructiveHint: true },
    outputSchema: { type: 'object', properties: { content: { type: 'string' } } },
  };

  it('adds one optional property and keeps everything else', () => {
    const out = augmentTool(tool);
    expect(Object.keys(out.inputSchema!.properties!)).toEqual(['path', 'content', '_agent_judge']);
    expect(out.inputSchema!.required).toEqual(['path', 'content']);
    expect(out.inputSchema!.additionalProperties).toBe(false);
    expect({ ...out, inputSchema: undefined }).toEqual({ ...tool, inputSchema: undefined });
    expect(augmentToolsList({ tools: [tool], nextCursor: 'p2' })).toMatchObject({ nextCursor: 'p2' });
  });

  it('refuses a tool that already has _agent_judge', () => {
    const clash = { ...tool, inputSchema: { type: 'object', properties: { _agent_judge: { type: 'string' } } } };
    expect(() => augmentTool(clash)).toThrow(ToolNameCollisionError);
    expect(() => augmentTool(clash)).toThrow('tool "write_file": its inputSchema already has a property _agent_judge');
  });

  it('strips _agent_judge before the call goes upstream; a malformed one names the field', () => {
    expect(splitArguments({ path: 'a', _agent_judge: { justification: 'why' } })).toEqual({
      upstream: { path: 'a' },
      agentJudge: { justification: 'why' },
    });
    expect(() => splitArguments({ _agent_judge: { justification: '' } })).toThrow(/_agent_judge\.justification/);
    expect(() => splitArguments({ _agent_judge: { evil: 1 } })).toThrow(/_agent_judge/);
  });

  it('a changed tool definition changes its hash', () => {
    expect(toolDefinitionHash(tool)).not.toBe(toolDefinitionHash({ ...tool, description: 'Write any file' }));
  });
});

describe('ProposalState: a proposal its caller performs', () => {
  const policy = testPolicy('/tmp');
  const state = () =>
    new ProposalState(
      {
        proposal_id: 'mcp-1',
        agent_id: '@a',
        action_type: 'mcp_tool_call',
        target: { server: 'fs', tool: 'x' },
        parameters: { arguments: {}, tool_definition_hash: hash },
        justification: 'j',
        cited_evidence: [],
        scope_claim: {},
        performer: { by: 'caller', call: hash, sequence: 0 },
      },
      policy,
      'proposal-x',
      'human-only',
      false,
      1,
    );

  it('refuses an outcome before approval, a second lease, and ok before the lease', () => {
    const s = state();
    expect(s.refuseCallerOutcome({ outcome: 'forwarding' })?.reason).toMatch(/not approved/);
    s.openCallerWindow('2030-01-01T00:00:00.000Z');
    expect(s.refuseCallerOutcome({ outcome: 'ok' })?.reason).toMatch(/lease the call/);
    expect(s.refuseCallerOutcome({ outcome: 'forwarding' })).toBeNull();
    s.recordCallerOutcome({ outcome: 'forwarding' }, '2026-01-01T00:00:00.000Z');
    expect(s.refuseCallerOutcome({ outcome: 'forwarding' })?.reason).toMatch(/never forwarded twice/);
    expect(s.refuseCallerOutcome({ outcome: 'abandoned' })?.reason).toMatch(/was forwarded/);
    s.recordCallerOutcome({ outcome: 'tool_error', detail: 'ENOENT' }, '2026-01-01T00:00:01.000Z');
    expect(s.callerStage()).toBe('failed');
    expect(s.toRecord().caller).toMatchObject({ outcome: 'tool_error', detail: 'ENOENT' });
    expect(s.refuseCallerOutcome({ outcome: 'ok' })?.reason).toMatch(/already recorded/);
  });

  it('nothing reported in time: abandoned if never forwarded, uncertain if forwarded', () => {
    const a = state();
    a.openCallerWindow('2030-01-01T00:00:00.000Z');
    a.callerTimedOut('2030-01-01T00:00:00.000Z');
    expect([a.caller?.outcome, a.callerStage()]).toEqual(['abandoned', 'approved']);
    const b = state();
    b.openCallerWindow('2030-01-01T00:00:00.000Z');
    b.recordCallerOutcome({ outcome: 'forwarding' }, '2029-01-01T00:00:00.000Z');
    b.callerTimedOut('2030-01-01T00:00:00.000Z');
    expect([b.caller?.outcome, b.callerStage()]).toEqual(['upstream_failure', 'uncertain']);
  });
});
