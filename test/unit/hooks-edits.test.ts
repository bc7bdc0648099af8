/** Approve with edits through a coding agent's hook (docs/edits.md): Claude Code answers with the edited input. */
import { describe, expect, it } from 'vitest';
import { claudeCode } from '../../src/hooks/claude-code';
import { codex } from '../../src/hooks/codex';
import { gemini } from '../../src/hooks/gemini';
import type { Lease } from '../../src/gate';

const lease = {
  proposalId: 'p1',
  workflowId: 'proposal-1',
  verdict: null,
  performer: 'hook:claude-code',
  status: {} as Lease['status'],
  edited: {
    arguments: { path: 'a.txt', text: 'hi' },
    changes: [{ path: 'parameters.arguments.text', from: 'hello', to: 'hi' }],
  },
  report: () => Promise.resolve(),
} satisfies Lease;

describe('an approval with edits in the hooks', () => {
  it('Claude Code allows with updatedInput, and the reason names the change', () => {
    const reply = claudeCode.render(
      { kind: 'forward', rule: 'mcp', lease, arguments: { path: 'a.txt', text: 'hi' } },
      { deferWhenHeld: false, terminalApproves: false },
    );
    const out = (reply.stdout as { hookSpecificOutput: Record<string, unknown> }).hookSpecificOutput;
    expect(out.permissionDecision).toBe('allow');
    expect(out.updatedInput).toEqual({ path: 'a.txt', text: 'hi' });
    expect(out.permissionDecisionReason).toMatch(/with edits .*parameters\.arguments\.text: "hello" -> "hi"/);
  });

  it('only Claude Code says it can change a tool input; Codex and Gemini are refused by the gate server', () => {
    expect(claudeCode.changesInput).toBe(true);
    expect(codex.changesInput).toBeFalsy();
    expect(gemini.changesInput).toBeFalsy();
  });
});
