/**
 * Gemini CLI's hooks (settings.json `hooks.BeforeTool` / `AfterTool`). Input: `{session_id, transcript_path, cwd,
 * hook_event_name, timestamp, tool_name, tool_input, mcp_context}` (no tool-use id: the call is named by its
 * session, tool and input); output `{decision: "allow" | "deny", reason}` (the reason goes to the model). Exit 2
 * blocks with stderr as the reason; other exit codes only warn and the tool runs, so every failure here is exit 2.
 */
import { z } from 'zod';
import { BadInputError } from '../contracts/errors';
import { describeIssues } from '../contracts/zod-error';
import { BUILTIN_SERVER } from '../contracts/hooks';
import { toolCallDigest } from '../gate';
import {
  hookStatement,
  modelText,
  personText,
  withoutFields,
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
});

/** Fields that only describe a call: the agent's statement. */
const STATEMENT_FIELDS: Record<string, readonly string[]> = {
  run_shell_command: ['description'],
  replace: ['instruction'],
};

export const gemini: HookAdapter = {
  runtime: 'gemini',
  read(input: unknown): HookEvent {
    const r = Base.safeParse(input);
    if (!r.success) throw new BadInputError(describeIssues('Gemini CLI hook input', r.error.issues));
    const i = r.data;
    const statement = STATEMENT_FIELDS[i.tool_name] ?? [];
    const args = withoutFields(i.tool_input, statement);
    const call = {
      runtime: 'gemini',
      server: BUILTIN_SERVER,
      tool: i.tool_name,
      arguments: args,
      cwd: i.cwd,
    };
    const key = `${i.session_id}:${toolCallDigest(call)}`;
    if (i.hook_event_name === 'BeforeTool') {
      const said = statement.map((f) => i.tool_input[f]).find((v) => typeof v === 'string');
      return {
        kind: 'pre',
        key,
        call: {
          ...call,
          agent: hookStatement('gemini', i.tool_name, i.session_id, said),
          session: { sessionId: i.session_id },
        },
      };
    }
    if (i.hook_event_name === 'AfterTool') {
      const response = (input as { tool_response?: unknown }).tool_response;
      const error =
        response !== null && typeof response === 'object' ? (response as { error?: unknown }).error : undefined;
      return error
        ? { kind: 'post', key, outcome: 'tool_error', detail: JSON.stringify(error).slice(0, 2000) }
        : { kind: 'post', key, outcome: 'ok' };
    }
    return { kind: 'ignored', why: `agent-judge does not handle ${i.hook_event_name}` };
  },
  render(answer: Decision): HookReply {
    if (answer.kind === 'forward') return { exitCode: 0, stdout: { decision: 'allow' } };
    const system = personText(answer);
    return {
      exitCode: 0,
      stdout: { decision: 'deny', reason: modelText(answer)!, ...(system ? { systemMessage: system } : {}) },
    };
  },
  acknowledge(): HookReply {
    return { exitCode: 0 };
  },
  block(reason: string): HookReply {
    return { exitCode: 2, stderr: `agent-judge: ${reason}; the call was not allowed` };
  },
};
