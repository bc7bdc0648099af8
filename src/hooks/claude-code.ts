/**
 * Claude Code's hooks (settings.json `hooks.PreToolUse` / `PostToolUse` / `PostToolUseFailure`, command or http
 * type). Input: `{session_id, transcript_path, cwd, permission_mode, hook_event_name, tool_name, tool_input,
 * tool_use_id}`; a PreToolUse answer is `{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision:
 * "allow" | "deny" | "ask" | "defer", permissionDecisionReason}}` (the deny reason is what the model reads). A held
 * call: `defer` in headless runs (`claude -p` ends with the call deferred; `--resume` asks again with the same
 * tool_use_id), `ask` when the person at the terminal counts as an approver, else a deny saying when to retry.
 */
import { z } from 'zod';
import { BadInputError } from '../contracts/errors';
import { describeIssues } from '../contracts/zod-error';
import { BUILTIN_SERVER } from '../contracts/hooks';
import {
  hookStatement,
  modelText,
  personText,
  withoutFields,
  type Decision,
  type HookAdapter,
  type HookEvent,
  type HookReply,
  type RenderOptions,
} from './adapter';
import { firstUserMessage } from './transcript';
import { describeChanges } from '../contracts/action-edit';

const Base = z.looseObject({
  session_id: z.string().min(1).max(256),
  transcript_path: z.string().max(4096).optional(),
  cwd: z.string().min(1).max(4096),
  hook_event_name: z.string(),
  tool_name: z.string().min(1).max(256),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().min(1).max(256),
});

/** Fields of a tool's input that only describe the call to a person: the agent's statement, not the action. */
const STATEMENT_FIELDS: Record<string, readonly string[]> = { Bash: ['description'] };

function parse(input: unknown): z.infer<typeof Base> {
  const r = Base.safeParse(input);
  if (!r.success) throw new BadInputError(describeIssues('Claude Code hook input', r.error.issues));
  return r.data;
}

function pre(reply: Record<string, unknown>, system?: string): HookReply {
  return {
    exitCode: 0,
    stdout: {
      hookSpecificOutput: { hookEventName: 'PreToolUse', ...reply },
      ...(system ? { systemMessage: system } : {}),
    },
  };
}

export const claudeCode: HookAdapter = {
  runtime: 'claude-code',
  changesInput: true,
  read(input: unknown): HookEvent {
    const i = parse(input);
    const key = `${i.session_id}:${i.tool_use_id}`;
    switch (i.hook_event_name) {
      case 'PreToolUse': {
        const statementFields = STATEMENT_FIELDS[i.tool_name] ?? [];
        const userTask = i.transcript_path ? firstUserMessage(i.transcript_path, 'claude-code') : undefined;
        return {
          kind: 'pre',
          key,
          call: {
            runtime: 'claude-code',
            server: BUILTIN_SERVER,
            tool: i.tool_name,
            arguments: withoutFields(i.tool_input, statementFields),
            cwd: i.cwd,
            agent: hookStatement('claude-code', i.tool_name, i.session_id, i.tool_input.description),
            ...(userTask !== undefined ? { userTask } : {}),
            session: { sessionId: i.session_id, callId: i.tool_use_id },
          },
        };
      }
      case 'PostToolUse': {
        // Claude Code sends PostToolUse only for a call that succeeded (a failed one, a Bash command's non-zero exit
        // included, is PostToolUseFailure). Bash's response is `{stdout, stderr, interrupted, ...}`: an interrupted
        // command did not finish.
        const response = (input as { tool_response?: unknown }).tool_response;
        const r = response !== null && typeof response === 'object' ? (response as Record<string, unknown>) : {};
        const performed = { tool: i.tool_name, sessionId: i.session_id, result: response };
        if (r.interrupted === true) {
          return { kind: 'post', key, outcome: 'tool_error', detail: 'interrupted', performed };
        }
        return { kind: 'post', key, outcome: r.is_error === true ? 'tool_error' : 'ok', performed };
      }
      case 'PostToolUseFailure': {
        const error = (input as { error?: unknown }).error;
        return {
          kind: 'post',
          key,
          outcome: 'tool_error',
          detail: typeof error === 'string' ? error.slice(0, 2000) : undefined,
        };
      }
      default:
        return { kind: 'ignored', why: `agent-judge does not handle ${i.hook_event_name}` };
    }
  },
  render(answer: Decision, options: RenderOptions): HookReply {
    if (answer.kind === 'forward') {
      const why = answer.lease
        ? `approved (${answer.rule}; proposal ${answer.lease.proposalId})`
        : `allowed (${answer.rule})`;
      const edited = answer.lease?.edited;
      if (edited) {
        // Approved with edits (docs/edits.md): the tool runs with exactly the edited input, and the model is told.
        return pre({
          permissionDecision: 'allow',
          permissionDecisionReason:
            `agent-judge: ${why} with edits by a person; it runs as edited, not as sent: ` +
            describeChanges(edited.changes),
          updatedInput: answer.arguments,
        });
      }
      return pre({ permissionDecision: 'allow', permissionDecisionReason: `agent-judge: ${why}` });
    }
    const text = modelText(answer)!;
    if (answer.kind === 'pending') {
      if (options.terminalApproves && answer.waitingFor === 'human') {
        return pre({
          permissionDecision: 'ask',
          permissionDecisionReason:
            `agent-judge: proposal ${answer.proposalId} waits for a person; ` +
            'approve here or with agent-judge decide',
        });
      }
      if (options.deferWhenHeld)
        return pre({ permissionDecision: 'defer', permissionDecisionReason: text }, personText(answer));
    }
    return pre({ permissionDecision: 'deny', permissionDecisionReason: text }, personText(answer));
  },
  acknowledge(): HookReply {
    return { exitCode: 0 };
  },
  block(reason: string): HookReply {
    return { exitCode: 2, stderr: `agent-judge: ${reason}; the call was not allowed` };
  },
};
