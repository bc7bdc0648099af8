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
} from './adapter';

const Base = z.looseObject({
  session_id: z.string().min(1).max(256),
  cwd: z.string().min(1).max(4096),
  hook_event_name: z.string(),
  tool_name: z.string().min(1).max(256),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().min(1).max(256),
});

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
      const response = (input as { tool_response?: unknown }).tool_response;
      const exit =
        response !== null && typeof response === 'object' ? (response as { exit_code?: unknown }).exit_code : undefined;
      return { kind: 'post', key, outcome: typeof exit === 'number' && exit !== 0 ? 'tool_error' : 'ok' };
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
