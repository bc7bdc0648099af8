/**
 * `agent-judge/ai-sdk`: the Vercel AI SDK 7 (`ai`) adapter. One spread puts every tool of a `generateText`,
 * `streamText` or `ToolLoopAgent` call behind the gate service (its URL and this agent's token):
 * `generateText({ model, ...withAgentJudge(tools, { url, token }) })`.
 * It answers the SDK's own approval hook (`toolApproval`) from the gate: a forward runs the tool, a REJECT (or
 * CLARIFY, or a refusal) is the SDK's denial with the text the model reads, and a call still being decided is the
 * SDK's approval request: the run stops with a `tool-approval-request`, durable in the application's messages. The
 * run resumed with a `tool-approval-response` asks the gate again. Each tool's `execute` is wrapped too: it performs
 * only a gate's `forward` and reports its outcome on the lease, so no approval given on the SDK's side runs a call the
 * gate has not forwarded. `ai` is not imported at all (its tool and approval shapes are declared structurally below,
 * and type-checked against `ai` 7's own declarations by test/integration/adapter-ai-sdk.test.ts): the rest of the
 * package works without it, on Node 20. docs/frameworks.md.
 */
import { AgentJudgeError, BadInputError } from '../contracts/errors';
import { modelText, personText } from '../gate/texts';
import type { CallGate, GateToolCall, PerformerLease } from '../gate/types';
import {
  editNote,
  gateOf,
  isRecord,
  detailOf,
  performedInput,
  reportOutcome,
  type AdapterAnswer,
  type AdapterOptions,
  type Forward,
} from './options';

/** The runtime name calls from this adapter carry (part of each call's identity). */
export const AI_SDK_RUNTIME = 'ai-sdk';

/**
 * What the adapter reads of an AI SDK tool (`Tool` from `ai`): its kind, description and `execute`. Any `ai` tool
 * (`tool({...})`, `dynamicTool({...})`) fits.
 */
export interface AiSdkTool {
  /** `function` (or absent) and `dynamic` run in process; `provider` tools run on the model provider's side. */
  type?: string;
  /** A text, or a function of the tool's context (then the call's justification is a generic one). */
  description?: string | ((options: never) => string);
  /** The tool's own function; absent for a tool whose output the application supplies itself. */
  execute?: (input: never, options: never) => unknown;
}

/** What the SDK hands its approval hook (`toolApproval`'s generic function form), as far as the adapter reads it. */
export interface AiSdkApprovalRequest {
  toolCall: { toolCallId: string; toolName: string; input: unknown };
  /** The messages the model was given for the step; on a resumed run, they end with the approval responses. */
  messages: readonly unknown[];
}

/** The statuses the adapter answers (a subset of `ai`'s `ToolApprovalStatus`). */
export type AgentJudgeApprovalStatus =
  | 'not-applicable'
  | { type: 'denied'; reason: string }
  | { type: 'user-approval'; reason: string };

/** The SDK's `toolApproval` option, answered by the gate. */
export type AgentJudgeToolApproval = (request: AiSdkApprovalRequest) => Promise<AgentJudgeApprovalStatus>;

export type AgentJudgeOptions = AdapterOptions & {
  /** The `server` the policy's rules match these tools under (default `ai-sdk`). */
  server?: string;
  /**
   * A call still being decided when the gate's hold ends: `approval-request` (default) makes it the SDK's approval
   * request (the run stops with a `tool-approval-request` part; resume it with a `tool-approval-response` after the
   * decision). `answer`: the SDK's denial with "pending, retry after ..." as the reason the model reads; the run goes
   * on.
   */
  pending?: 'approval-request' | 'answer';
};

type PendingAnswer = Extract<AdapterAnswer, { kind: 'pending' }>;

/**
 * A run resumed with an approval response for a call whose proposal is still undecided: nothing ran and the model was
 * not called. The application's messages are unchanged (still ending with its approval response): resume them again
 * after the decision. `answer` says which proposal waits and how long.
 */
export class AgentJudgePendingError extends AgentJudgeError {
  constructor(
    readonly answer: PendingAnswer,
    readonly call: GateToolCall,
  ) {
    super(modelText(answer) ?? 'agent-judge: pending, not performed yet.');
  }
}

/**
 * A call the judged `execute` did not perform (it was reached without the gate's `forward`: the application's own
 * `toolApproval` replaced the adapter's). The SDK hands it to the model as the tool's error; the model reads exactly
 * the gate's text (`toString()` is the message alone).
 */
export class AgentJudgeNotPerformedError extends AgentJudgeError {
  constructor(
    readonly answer: Exclude<AdapterAnswer, { kind: 'forward' }>,
    readonly call: GateToolCall,
  ) {
    super(notPerformedText(answer));
  }

  override toString(): string {
    return this.message;
  }
}

function notPerformedText(answer: Exclude<AdapterAnswer, { kind: 'forward' }>): string {
  if (answer.kind === 'cancelled') return 'agent-judge: cancelled, not performed.';
  return modelText(answer) ?? 'agent-judge REJECT. Not performed.';
}

/**
 * The `tools` and `toolApproval` options of `generateText`, `streamText` or `ToolLoopAgent`, every tool behind the
 * gate: spread them into the call (`...withAgentJudge(tools, { url, token })`). `tools` keeps the given tools' names,
 * schemas and types; only `execute` is wrapped. Provider-executed tools and tools without `execute` are refused
 * (`BadInputError`) rather than passed through unjudged: they do not run where the gate can hold them.
 */
export function withAgentJudge<TOOLS extends Record<string, AiSdkTool>>(
  tools: TOOLS,
  options: AgentJudgeOptions,
): { tools: TOOLS; toolApproval: AgentJudgeToolApproval } {
  const answers: Answers = new Map();
  const gate = gateOf(options);
  const judged: Record<string, AiSdkTool> = {};
  const originals = new Map<string, AiSdkTool>();
  for (const [name, tool] of Object.entries(tools)) {
    if (tool.type === 'provider') {
      throw new BadInputError(
        `agent-judge cannot judge the provider tool ${name}: it runs on the model provider's side, where the gate ` +
          'cannot hold it',
      );
    }
    if (typeof tool.execute !== 'function') {
      throw new BadInputError(
        `agent-judge cannot judge the tool ${name}: it has no execute (the application supplies its output), so it ` +
          'does not run where the gate can hold it',
      );
    }
    originals.set(name, tool);
    judged[name] = judgedTool(name, tool, answers, options, gate);
  }
  return { tools: judged as TOOLS, toolApproval: approvalHook(originals, answers, options, gate) };
}

/** The gate's answers taken in `toolApproval`, handed to `execute` by tool call id (forwards only; taken once). */
type Answers = Map<string, Forward>;

type Execute = (input: unknown, options: { toolCallId: string; abortSignal?: AbortSignal }) => unknown;

function callOf(name: string, tool: AiSdkTool, input: unknown, callId: string, server?: string): GateToolCall {
  // A description computed from the tool's context is not known here: the generic justification stands in.
  const description = typeof tool.description === 'string' ? tool.description.trim() : '';
  return {
    runtime: AI_SDK_RUNTIME,
    server: server ?? 'ai-sdk',
    tool: name,
    arguments: isRecord(input) ? input : { input },
    agent: {
      justification:
        description !== '' ? description.slice(0, 4096) : `${name} call; the tool gave no description of its purpose`,
    },
    session: { callId },
  };
}

function approvalHook(
  tools: ReadonlyMap<string, AiSdkTool>,
  answers: Answers,
  options: AgentJudgeOptions,
  gate: CallGate,
): AgentJudgeToolApproval {
  return async ({ toolCall, messages }) => {
    const tool = tools.get(toolCall.toolName);
    // A tool added to the set after withAgentJudge: its execute is not the gate's, so it does not run.
    if (!tool) {
      return {
        type: 'denied',
        reason: `agent-judge REJECT: the tool ${toolCall.toolName} is not behind agent-judge. Not performed.`,
      };
    }
    const call = callOf(toolCall.toolName, tool, toolCall.input, toolCall.toolCallId, options.server);
    const answer = await gate.decide(call);
    switch (answer.kind) {
      case 'forward':
        answers.set(toolCall.toolCallId, answer);
        return 'not-applicable';
      case 'pending': {
        options.onPending?.(answer, call);
        // Resumed with the application's approval response while the proposal is still undecided: the SDK would run
        // any status but `denied` now, and a denial would end the pause. Throwing leaves the run where it was.
        if (isResumed(toolCall.toolCallId, messages)) throw new AgentJudgePendingError(answer, call);
        if ((options.pending ?? 'approval-request') === 'answer') return { type: 'denied', reason: modelText(answer)! };
        return { type: 'user-approval', reason: personText(answer) ?? modelText(answer)! };
      }
      default:
        return { type: 'denied', reason: notPerformedText(answer) };
    }
  };
}

function judgedTool<T extends AiSdkTool>(
  name: string,
  tool: T,
  answers: Answers,
  options: AgentJudgeOptions,
  gate: CallGate,
): T {
  const execute = tool.execute as unknown as Execute;
  const judgedExecute: Execute = async (input, execution) => {
    const callId = execution.toolCallId;
    const call = callOf(name, tool, input, callId, options.server);
    let answer: AdapterAnswer | undefined = answers.get(callId);
    answers.delete(callId);
    // Not asked in toolApproval (the application's own `toolApproval` replaced the adapter's): ask now. Only a
    // forward runs the tool; any other answer is a tool error whose text the model reads.
    if (!answer) {
      answer = await gate.decide(call, { signal: execution.abortSignal });
      if (answer.kind === 'pending') options.onPending?.(answer, call);
    }
    if (answer.kind !== 'forward') throw new AgentJudgeNotPerformedError(answer, call);
    // Exactly what was approved (a person's edits included), never the input as the model sent it.
    const approved = performedInput(input, answer);
    const lease = answer.lease;
    let output: unknown;
    try {
      output = await execute(approved, execution);
    } catch (err) {
      if (lease)
        await reportOutcome(lease.report('performer_failure', detailOf((err as Error).message)), call, options);
      throw err;
    }
    // A streaming tool (an async iterable of preliminary results) runs while the SDK reads it: report at its end.
    if (lease && isAsyncIterable(output)) return reportedAtEnd(output, lease, call, options);
    if (lease) await reportOutcome(lease.report('ok'), call, options);
    // Approved with edits: the model is told what ran before the tool's text (another output type is the
    // application's own and passes as it is).
    const note = editNote(answer);
    return note !== undefined && typeof output === 'string' ? `${note}\n${output}` : output;
  };
  return { ...tool, execute: judgedExecute };
}

/**
 * True when `messages` (the ones a resumed run validates its approvals against) end with the application's approval
 * response to this tool call's approval request.
 */
export function isResumed(toolCallId: string, messages: readonly unknown[]): boolean {
  const last = messages.at(-1);
  if (!isRecord(last) || last.role !== 'tool' || !Array.isArray(last.content)) return false;
  const responded = new Set(
    last.content
      .filter((p): p is Record<string, unknown> => isRecord(p) && p.type === 'tool-approval-response')
      .map((p) => p.approvalId),
  );
  return messages.some(
    (m) =>
      isRecord(m) &&
      m.role === 'assistant' &&
      Array.isArray(m.content) &&
      m.content.some(
        (p) =>
          isRecord(p) &&
          p.type === 'tool-approval-request' &&
          p.toolCallId === toolCallId &&
          responded.has(p.approvalId),
      ),
  );
}

async function* reportedAtEnd(
  output: AsyncIterable<unknown>,
  lease: PerformerLease,
  call: GateToolCall,
  options: AgentJudgeOptions,
): AsyncGenerator<unknown> {
  try {
    yield* output;
  } catch (err) {
    await reportOutcome(lease.report('performer_failure', detailOf((err as Error).message)), call, options);
    throw err;
  }
  await reportOutcome(lease.report('ok'), call, options);
}

function isAsyncIterable(v: unknown): v is AsyncIterable<unknown> {
  return typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
}
