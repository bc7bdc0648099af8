/**
 * Codex CLI's hooks (`hooks.PreToolUse` / `PostToolUse` in ~/.codex/config.toml or hooks.json). Input (JSON Schema
 * in codex-rs/hooks/schema/generated/): `{session_id, turn_id, transcript_path, cwd, hook_event_name, model,
 * permission_mode, tool_name, tool_input, tool_use_id}`; shell calls are `Bash` with `{command}`, file edits
 * `apply_patch` with the patch as `{command}`. A deny is `{hookSpecificOutput: {hookEventName: "PreToolUse",
 * permissionDecision: "deny", permissionDecisionReason}}`; an allowed call gets no output at all (Codex treats an
 * `allow` without `updatedInput` as a failed hook, and an unknown field the same way). Exit 2 with a reason on
 * stderr blocks; any other failure lets the tool run, so every failure here is rendered as exit 2.
 */
import { z } from 'zod';
import { BadInputError } from '../contracts/errors';
import { describeIssues } from '../contracts/zod-error';
import { BUILTIN_SERVER } from '../contracts/hooks';
import {
  hookStatement,
  modelText,
  personText,
  type Decision,
  type HookAdapter,
  type HookEvent,
  type HookReply,
  type PostEvent,
} from './adapter';

const Base = z.looseObject({
  session_id: z.string().min(1).max(256),
  cwd: z.string().min(1).max(4096),
  hook_event_name: z.string(),
  tool_name: z.string().min(1).max(256),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().min(1).max(256),
});

/** The success line Codex's own apply_patch writes first when every change was applied. */
const PATCH_APPLIED = 'Success. Updated the following files:';
/** The header Codex writes before the output of a patch it applied through its exec runtime (0.171.0). */
const PATCH_EXEC_HEADER = /^Exit code: (-?\d+)\nWall time: [^\n]*\nOutput:\n/;

/**
 * What a Codex PostToolUse report says happened. Codex sends it only for a call that returned (an error it answers
 * the model with sends none), and its `tool_response` is, in codex-rs/core/src/tools/context.rs:
 * - a shell command (`Bash`): the command's output as a plain string. Its exit code is not in the report, so success
 *   cannot be told: `unknown`, never `ok` (a failed `git push` prints text like any other).
 * - `apply_patch`: Codex's own text, as a string: 0.171.0 sends `Exit code: N\nWall time: ...\nOutput:\n` and the
 *   patch's summary (`Success. Updated the following files:` ...); applied in process, the summary alone. Later
 *   versions send an object whose `status` is `completed`, `no_op`, `failed` or `partial`. A shell command's output
 *   is never read for such a header: the command could print one.
 * - anything else with a numeric `exit_code` or an MCP result's `isError`: read as such.
 */
export function codexOutcome(tool: string, response: unknown): Pick<PostEvent, 'outcome' | 'detail'> {
  if (typeof response === 'string') {
    if (tool === 'apply_patch') {
      // Codex's own text, never a command's output: its header's exit code and its summary can be read.
      const code = PATCH_EXEC_HEADER.exec(response)?.[1];
      if (code !== undefined)
        return code === '0' ? { outcome: 'ok' } : { outcome: 'tool_error', detail: `apply_patch exit code ${code}` };
      if (response.startsWith(PATCH_APPLIED)) return { outcome: 'ok' };
    }
    return { outcome: 'unknown', detail: `Codex reported the ${tool} call's output without its exit code` };
  }
  if (response !== null && typeof response === 'object') {
    const r = response as { status?: unknown; exit_code?: unknown; isError?: unknown; summary?: unknown };
    const said = typeof r.summary === 'string' ? r.summary.slice(0, 2000) : undefined;
    if (r.status === 'completed' || r.status === 'no_op') return { outcome: 'ok' };
    if (r.status === 'failed' || r.status === 'partial')
      return { outcome: 'tool_error', detail: `apply_patch ${r.status}${said ? `: ${said}` : ''}` };
    if (typeof r.exit_code === 'number')
      return r.exit_code === 0 ? { outcome: 'ok' } : { outcome: 'tool_error', detail: `exit code ${r.exit_code}` };
    if (typeof r.isError === 'boolean') return { outcome: r.isError ? 'tool_error' : 'ok' };
  }
  return { outcome: 'unknown', detail: `Codex's report of the ${tool} call does not say whether it succeeded` };
}

export const codex: HookAdapter = {
  runtime: 'codex',
  read(input: unknown): HookEvent {
    const r = Base.safeParse(input);
    if (!r.success) throw new BadInputError(describeIssues('Codex hook input', r.error.issues));
    const i = r.data;
    const key = `${i.session_id}:${i.tool_use_id}`;
    if (i.hook_event_name === 'PreToolUse') {
      return {
        kind: 'pre',
        key,
        call: {
          runtime: 'codex',
          server: BUILTIN_SERVER,
          tool: i.tool_name,
          arguments: i.tool_input,
          cwd: i.cwd,
          agent: hookStatement('codex', i.tool_name, i.session_id, undefined),
          session: { sessionId: i.session_id, callId: i.tool_use_id },
        },
      };
    }
    if (i.hook_event_name === 'PostToolUse') {
      const result = (input as { tool_response?: unknown }).tool_response;
      const performed = { tool: i.tool_name, sessionId: i.session_id, result };
      return { kind: 'post', key, ...codexOutcome(i.tool_name, result), performed };
    }
    return { kind: 'ignored', why: `agent-judge does not handle ${i.hook_event_name}` };
  },
  render(answer: Decision): HookReply {
    if (answer.kind === 'forward') return { exitCode: 0 };
    const system = personText(answer);
    return {
      exitCode: 0,
      stdout: {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: modelText(answer)!,
        },
        ...(system ? { systemMessage: system } : {}),
      },
    };
  },
  acknowledge(): HookReply {
    return { exitCode: 0 };
  },
  block(reason: string): HookReply {
    return { exitCode: 2, stderr: `agent-judge: ${reason}; the call was not allowed` };
  },
};
