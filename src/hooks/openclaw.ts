/**
 * OpenClaw's tool hooks, as the agent-judge plugin (openclaw/, src/openclaw/plugin.ts) posts them to the resident
 * gate: `before_tool_call` and `after_tool_call` with OpenClaw's own event and context fields (`toolName`, `params`,
 * `toolCallId`, `runId`, `sessionId`, `sessionKey`, `agentId`) and the directory the agent's tools act in. Every tool
 * the gateway runs arrives here: exec, the file tools, message sends, web, MCP and other plugins' tools alike (the
 * plugin registers without a matcher). The answer is `{decision: "allow" | "block", reason}`; the plugin turns a
 * block into OpenClaw's `{block: true, blockReason}`, the text the model reads as the tool's result. docs/openclaw.md.
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

const Id = z.string().min(1).max(256);

const Input = z.looseObject({
  hook: z.enum(['before_tool_call', 'after_tool_call']),
  toolName: z.string().min(1).max(256),
  params: z.record(z.string(), z.unknown()),
  toolCallId: Id.optional(),
  runId: Id.optional(),
  sessionId: Id.optional(),
  sessionKey: z.string().max(1024).optional(),
  agentId: z.string().max(256).optional(),
  cwd: z.string().min(1).max(4096),
  /** after_tool_call: the tool's error, when it failed. */
  error: z.string().max(100_000).optional(),
  /** after_tool_call: how the tool's result says it ended (its `details`; exec: `status` and `exitCode`). */
  result: z
    .looseObject({ status: z.string().max(64).optional(), exitCode: z.number().int().nullable().optional() })
    .optional(),
});

export type OpenClawHookInput = z.infer<typeof Input>;

/** The answer the plugin reads back. */
export interface OpenClawHookOutput {
  decision: 'allow' | 'block';
  reason: string;
  /** For the operator's log, never the model: how a person decides a held call. */
  person?: string;
}

function parse(input: unknown): OpenClawHookInput {
  const r = Input.safeParse(input);
  if (!r.success) throw new BadInputError(describeIssues('OpenClaw hook input', r.error.issues));
  return r.data;
}

/**
 * What an after_tool_call says happened. OpenClaw sets `error` for a tool that failed; its exec tool does not fail
 * for a command's non-zero exit: it answers `details: {status: "completed", exitCode: N}` (`failed` when the command
 * could not run or was killed, `running` when moved to the background), which the plugin forwards as `result`. An exec
 * call whose result names no exit code (a plugin before this field, a command still running) is `unknown`.
 */
export function openclawOutcome(i: OpenClawHookInput): Pick<PostEvent, 'outcome' | 'detail'> {
  if (i.error !== undefined) return { outcome: 'tool_error', detail: i.error.slice(0, 2000) };
  const { status, exitCode } = i.result ?? {};
  if (status === 'failed')
    return { outcome: 'tool_error', detail: `failed${typeof exitCode === 'number' ? ` (exit code ${exitCode})` : ''}` };
  if (typeof exitCode === 'number')
    return exitCode === 0 ? { outcome: 'ok' } : { outcome: 'tool_error', detail: `exit code ${exitCode}` };
  if (i.toolName === 'exec' || (status !== undefined && status !== 'completed'))
    return {
      outcome: 'unknown',
      detail: `OpenClaw's ${i.toolName} result names no exit code (status ${status ?? 'none'})`,
    };
  return { outcome: 'ok' };
}

/** OpenClaw's Tool Search wrapper: a catalog tool the model calls through `tool_call`. */
export const TOOL_CALL_WRAPPER = 'tool_call';
/** The catalog id of an OpenClaw core tool (`openclaw:core:<name>`). */
const CORE_CATALOG_ID = /^openclaw:core:([a-z][a-z0-9_]{0,63})$/;
const BARE_TOOL_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The tool a `tool_call` wrapper calls, when it is plainly one OpenClaw core tool: OpenClaw's Tool Search (on by
 * default) hides `web_fetch`, `web_search`, `message` and others behind `tool_call {id | name, args | arguments}`, and
 * OpenClaw runs exactly that tool with exactly those arguments. Unwrapped, the call is judged by the inner tool's own
 * rule. Anything else (an MCP or plugin catalog id, a nested wrapper, fields beside the selector and the arguments,
 * arguments that are not an object) stays the wrapper: unmapped, a person decides.
 */
export function unwrapToolCall(
  toolName: string,
  params: Record<string, unknown>,
): { toolName: string; params: Record<string, unknown> } | null {
  if (toolName !== TOOL_CALL_WRAPPER) return null;
  const keys = Object.keys(params);
  const selectors = keys.filter((k) => k === 'id' || k === 'name');
  const argKeys = keys.filter((k) => k === 'args' || k === 'arguments');
  if (selectors.length !== 1 || argKeys.length > 1 || keys.length !== selectors.length + argKeys.length) return null;
  const selector = params[selectors[0]!];
  if (typeof selector !== 'string') return null;
  const inner = CORE_CATALOG_ID.exec(selector)?.[1] ?? (BARE_TOOL_NAME.test(selector) ? selector : null);
  if (inner === null || inner === TOOL_CALL_WRAPPER) return null;
  const args = argKeys.length === 1 ? params[argKeys[0]!] : {};
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return null;
  return { toolName: inner, params: args as Record<string, unknown> };
}

function out(o: OpenClawHookOutput): HookReply {
  return { exitCode: 0, stdout: { ...o } };
}

export const openclaw: HookAdapter = {
  runtime: 'openclaw',
  read(input: unknown): HookEvent {
    const i = parse(input);
    const session = i.sessionId ?? i.sessionKey ?? i.runId;
    // Without a tool-call id a call is named by its session and exact input (as Gemini CLI's are).
    const key = `${session ?? '-'}:${i.toolCallId ?? JSON.stringify([i.toolName, i.params])}`;
    if (i.hook === 'after_tool_call') return { kind: 'post', key, ...openclawOutcome(i) };
    const { toolName, params } = unwrapToolCall(i.toolName, i.params) ?? i;
    return {
      kind: 'pre',
      key,
      call: {
        runtime: 'openclaw',
        server: BUILTIN_SERVER,
        tool: toolName,
        arguments: params,
        cwd: i.cwd,
        agent: hookStatement('openclaw', toolName, session, undefined),
        session: { ...(session ? { sessionId: session } : {}), ...(i.toolCallId ? { callId: i.toolCallId } : {}) },
      },
    };
  },
  render(answer: Decision): HookReply {
    if (answer.kind === 'forward') {
      const why = answer.lease
        ? `approved (${answer.rule}; proposal ${answer.lease.proposalId})`
        : `allowed (${answer.rule})`;
      return out({ decision: 'allow', reason: `agent-judge: ${why}` });
    }
    const person = personText(answer);
    return out({ decision: 'block', reason: modelText(answer)!, ...(person ? { person } : {}) });
  },
  acknowledge(): HookReply {
    return out({ decision: 'allow', reason: 'agent-judge: recorded' });
  },
  block(reason: string): HookReply {
    return { exitCode: 2, stderr: `agent-judge: ${reason}; the call was not allowed` };
  },
};
