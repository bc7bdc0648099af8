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
  type PostEvent,
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

/** The shell tool's report: `Output: ...`, then `Exit Code: N` only when it is not 0 (older releases: always). */
const SHELL_REPORT = /^(Command|Output): /;
const EXIT_CODE = /^Exit Code: (-?\d+)$/gm;
const SIGNAL = /^Signal: (?!\(none\))(.+)$/m;

/**
 * What a Gemini CLI AfterTool report says happened. Its `tool_response` is the tool's result, `{llmContent,
 * returnDisplay, error}` (packages/core/src/core/coreToolHookTriggers.ts); `error` is set when a tool failed (the
 * ToolResult contract), so it is `tool_error`. `run_shell_command` sets `error` only when the shell could not run the
 * command: a command that ran and failed is in its `llmContent`, which ends with `Exit Code: N` when N is not 0 and
 * `Signal: ...` when killed (packages/core/src/tools/shell.ts). The last `Exit Code:` line is the shell's own (the
 * command's output comes before it). A shell result in no known shape (summarised, moved to the background,
 * cancelled) is `unknown`.
 */
export function geminiOutcome(tool: string, response: unknown): Pick<PostEvent, 'outcome' | 'detail'> {
  const r = response !== null && typeof response === 'object' ? (response as Record<string, unknown>) : undefined;
  if (r?.error) return { outcome: 'tool_error', detail: JSON.stringify(r.error).slice(0, 2000) };
  if (tool !== 'run_shell_command') return r ? { outcome: 'ok' } : { outcome: 'unknown', detail: 'no tool_response' };
  const text = typeof r?.llmContent === 'string' ? r.llmContent : undefined;
  if (text === undefined || !SHELL_REPORT.test(text))
    return { outcome: 'unknown', detail: "Gemini CLI's shell report does not say how the command ended" };
  const code = [...text.matchAll(EXIT_CODE)].at(-1)?.[1];
  if (code !== undefined && code !== '0') return { outcome: 'tool_error', detail: `exit code ${code}` };
  const signal = SIGNAL.exec(text)?.[1];
  if (signal !== undefined) return { outcome: 'tool_error', detail: `terminated by signal ${signal.slice(0, 64)}` };
  return { outcome: 'ok' };
}

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
      const result = (input as { tool_response?: unknown }).tool_response;
      const performed = { tool: i.tool_name, sessionId: i.session_id, result };
      return { kind: 'post', key, ...geminiOutcome(i.tool_name, result), performed };
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
