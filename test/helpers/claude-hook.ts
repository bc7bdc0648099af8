/**
 * Claude Code's `http` hook as a test sends it: its documented PreToolUse input for one tool call, POSTed to the
 * resident gate with the agent's token, and the decision and reason Claude Code would read back.
 */
import { randomUUID } from 'node:crypto';

export interface ClaudeDecision {
  decision?: string;
  reason: string;
}

export async function claudePreToolUse(
  gate: { url: string; token: string },
  cwd: string,
  tool: string,
  input: Record<string, unknown>,
  session = 'sess-test',
): Promise<ClaudeDecision> {
  const res = await fetch(`${gate.url}/hooks/claude-code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gate.token}` },
    body: JSON.stringify({
      session_id: session,
      transcript_path: '/nonexistent/t.jsonl',
      cwd,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: tool,
      tool_input: input,
      tool_use_id: randomUUID(),
    }),
  });
  if (res.status !== 200) throw new Error(`the gate answered ${res.status}: ${await res.text()}`);
  const out = (
    (await res.json()) as { hookSpecificOutput: { permissionDecision?: string; permissionDecisionReason?: string } }
  ).hookSpecificOutput;
  return { decision: out.permissionDecision, reason: out.permissionDecisionReason ?? '' };
}
