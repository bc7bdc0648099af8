/** `mcp check` on a terminal: the table a person reads (scripts get the JSON, which the e2e test reads). */
import { describe, expect, it } from 'vitest';
import { renderMcpCheck } from '../../src/cli/mcp-check-text';

const tool = (name: string, over: Partial<{ rule: string | null; tier: string; action_type: string | null }> = {}) => ({
  tool: name,
  rule: `fs.${name}`,
  tier: 'no-judge',
  action_type: null,
  unmapped: false,
  ...over,
});

describe('mcp check on a terminal', () => {
  it('one row per tool, unmapped ones marked and counted', () => {
    const text = renderMcpCheck({
      server: 'fs',
      tools: [
        tool('read_text_file'),
        tool('edit_file', { rule: null, tier: 'human-only', action_type: 'mcp_tool_call' }),
      ].map((t) => ({ ...t, unmapped: t.rule === null })),
      unmapped: ['edit_file'],
    });
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^TOOL +RULE +TIER +ACTION TYPE$/);
    expect(lines[1]).toMatch(/^read_text_file +fs\.read_text_file +no-judge +\(set by the rule\)$/);
    expect(lines[2]).toMatch(/^edit_file +\(unmapped\) +human-only +mcp_tool_call$/);
    expect(text).toContain('1 of 2 tools of fs match no rule');
  });

  it('every tool mapped says so; no tools says so', () => {
    expect(renderMcpCheck({ server: 'fs', tools: [tool('a')], unmapped: [] })).toContain(
      '1 tool of fs, every one mapped by a rule',
    );
    expect(renderMcpCheck({ server: 'fs', tools: [], unmapped: [] })).toContain('fs: the upstream lists no tools');
  });

  it("an upstream's tool name cannot forge a row or hide with a direction override", () => {
    const text = renderMcpCheck({
      server: 'fs',
      tools: [tool('evil\nread_text_file  fs.read  no-judge\u202e', { rule: null, tier: 'human-only' })],
      unmapped: ['evil'],
    });
    // Header, one row, blank line, summary: the line break in the name did not make a second row.
    expect(text.trimEnd().split('\n')).toHaveLength(4);
    expect(text).not.toContain('\u202e');
  });
});
