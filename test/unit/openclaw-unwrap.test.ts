/**
 * OpenClaw's Tool Search wrapper (`tool_call {id | name, args | arguments}`), as the gate's OpenClaw adapter reads it:
 * a plain OpenClaw core tool is judged by its own rule; anything else stays the wrapper, which a person decides.
 */
import { describe, expect, it } from 'vitest';
import { openclaw, unwrapToolCall } from '../../src/hooks/openclaw';

describe("OpenClaw's tool_call wrapper", () => {
  it('unwraps a core tool named by catalog id or by name, with its arguments exactly', () => {
    expect(
      unwrapToolCall('tool_call', { id: 'openclaw:core:web_fetch', args: { url: 'https://example.com' } }),
    ).toEqual({ toolName: 'web_fetch', params: { url: 'https://example.com' } });
    expect(unwrapToolCall('tool_call', { name: 'message', arguments: { to: 'x', text: 'hi' } })).toEqual({
      toolName: 'message',
      params: { to: 'x', text: 'hi' },
    });
    expect(unwrapToolCall('tool_call', { name: 'web_search' })).toEqual({ toolName: 'web_search', params: {} });
  });

  it('keeps the wrapper for anything that is not plainly one core tool', () => {
    const kept: Array<Record<string, unknown>> = [
      { id: 'mcp:forge:merge', args: {} },
      { id: 'openclaw:some-plugin:deploy', args: {} },
      { name: 'tool_call', args: { name: 'exec', args: { command: 'rm -rf /' } } },
      { id: 'openclaw:core:exec', name: 'read', args: {} },
      { name: 'exec', args: { command: 'ls' }, command: 'rm -rf /' },
      { name: 'exec', args: { command: 'ls' }, arguments: { command: 'rm -rf /' } },
      { name: 'exec', args: 'command=ls' },
      { name: 'exec', args: ['ls'] },
      { name: 'Exec; rm', args: {} },
      { name: 42, args: {} },
      {},
    ];
    for (const params of kept) expect(unwrapToolCall('tool_call', params), JSON.stringify(params)).toBeNull();
    expect(unwrapToolCall('web_fetch', { name: 'exec', args: {} })).toBeNull();
  });

  it('the adapter hands the gate the inner tool; the post-tool report keeps the wrapper call’s key', () => {
    const base = { cwd: '/work', sessionId: 's', toolCallId: 'c1' };
    const pre = openclaw.read({
      hook: 'before_tool_call',
      toolName: 'tool_call',
      params: { name: 'exec', args: { command: 'ls' } },
      ...base,
    });
    expect(pre).toMatchObject({ kind: 'pre', key: 's:c1', call: { tool: 'exec', arguments: { command: 'ls' } } });
    const post = openclaw.read({ hook: 'after_tool_call', toolName: 'tool_call', params: {}, ...base });
    expect(post).toMatchObject({ kind: 'post', key: 's:c1' });
  });
});
