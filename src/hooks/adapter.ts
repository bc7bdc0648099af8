/**
 * What every coding-agent hook adapter shares: the event a runtime's hook input becomes (a tool call to decide, the
 * outcome of one performed), the reply a runtime reads back (its JSON on stdout and an exit code), and the texts the
 * model and the person at the terminal read. Each runtime's file (claude-code.ts, codex.ts, gemini.ts) reads its own
 * input format and renders these in its own output format; nothing here knows a runtime.
 */
import type { GateAnswer, GateToolCall } from '../gate';
import type { GateRuntime } from '../contracts/hooks';

/**
 * What a runtime's post-tool report says happened, read for what it really says: `tool_error` only from a failure the
 * runtime states (an error, a non-zero exit code), `ok` only where the runtime's contract makes success explicit, and
 * `unknown` where it cannot be told (Codex reports a shell command's output text, with no exit code).
 */
export type PostOutcome = 'ok' | 'tool_error' | 'unknown';

/** One hook invocation, as the gate sees it. */
export type HookEvent =
  | {
      kind: 'pre';
      call: GateToolCall;
      /** Names this tool call until its outcome comes back (session and tool-use id, or the call itself). */
      key: string;
    }
  | {
      kind: 'post';
      key: string;
      outcome: PostOutcome;
      detail?: string;
      /** The call performed and what it returned (for provenance, docs/provenance.md), when the runtime says. */
      performed?: Performed;
    }
  | { kind: 'ignored'; why: string };

/** A performed call's tool, session and result, as a post-tool report carries them. */
export interface Performed {
  tool: string;
  sessionId: string;
  result: unknown;
}

/** A post-tool report: which call, and what happened to it. */
export type PostEvent = Extract<HookEvent, { kind: 'post' }>;

/** What the runtime reads back: stdout (JSON, or nothing), stderr, exit code (0 or 2, the blocking code). */
export interface HookReply {
  exitCode: 0 | 2;
  stdout?: Record<string, unknown>;
  stderr?: string;
}

/** How a held call is answered when its hold ends. */
export interface RenderOptions {
  /** Claude Code headless: answer `defer` (the run ends with the call deferred; `--resume` asks again). */
  deferWhenHeld: boolean;
  /** The person at the terminal approves (Claude Code's `ask`) instead of the policy's approvers. */
  terminalApproves: boolean;
}

export type Decision = Exclude<GateAnswer, { kind: 'cancelled' }>;

/** One runtime's reader and renderer. */
export interface HookAdapter {
  runtime: GateRuntime;
  /**
   * True when the runtime's PreToolUse answer can change the tool's input (Claude Code's `updatedInput`): only then
   * is a call a person approved with edits performed (docs/edits.md); elsewhere it is refused, telling the model the
   * edits.
   */
  changesInput?: boolean;
  /** The runtime's hook input (parsed JSON) as an event; throws BadInputError naming the field when it is not one. */
  read(input: unknown): HookEvent;
  /** The gate's answer to a `pre` event, in the runtime's format. */
  render(answer: Decision, options: RenderOptions): HookReply;
  /** The reply to a `post` or ignored event (nothing to say). */
  acknowledge(): HookReply;
  /** A blocking reply for when nothing could be decided (the gate unreachable, input unreadable). */
  block(reason: string): HookReply;
}

// The model's and the person's texts are the gate's, one wording for every runtime (src/gate/texts.ts).
export { modelText, personText } from '../gate/texts';

/** A hook call's agent statement: the tool's own description as its justification, the session as evidence. */
export function hookStatement(
  runtime: GateRuntime,
  tool: string,
  sessionId: string | undefined,
  description: unknown,
): NonNullable<GateToolCall['agent']> {
  const justification =
    typeof description === 'string' && description.trim() !== ''
      ? description.slice(0, 4096)
      : `${runtime} ${tool} call; the tool gave no description of its purpose`;
  return {
    justification,
    ...(sessionId
      ? {
          // The runtime (not the model) names the session the call belongs to: the user's request there is what the
          // call serves. The judge sees the session's task itself as `user_task` where the runtime gives it.
          cited_evidence: [{ type: 'session', source: `${runtime} session ${sessionId}`.slice(0, 512) }],
        }
      : {}),
  };
}

/** `arguments` without the statement-only fields (a model's description of a command is not the command). */
export function withoutFields(args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) if (!fields.includes(k)) out[k] = v;
  return out;
}
